export { stripAnsi } from "./ansi.js";
export { codeBlock, inlineCode } from "./markdown.js";
