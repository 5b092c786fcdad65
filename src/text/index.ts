export { stripAnsi } from "./ansi.js";
export { codeBlock, inlineCode } from "./markdown.js";
export { closesFence, fencedBlocks, forEachLine, leadingSpaces, onlySpaces, openFenceAtEnd, openingFence, type Fence, type FencedBlock } from "./fences.js";
