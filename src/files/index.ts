export { writeFileAtomic, writeFileAtomicSync, flushPendingWrites, syncDir, type AtomicWriteOptions } from "./atomic-file.js";
export {
  readBoundedFile,
  readBoundedFileSync,
  readBoundedText,
  readBoundedTextSync,
  UnsafeFileError,
  type BoundedReadOptions,
  type UnsafeFileReason,
} from "./bounded-read.js";
