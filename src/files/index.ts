export { writeFileAtomic, writeFileAtomicSync, flushPendingWrites, syncDir, type AtomicWriteOptions } from "./atomic-file.js";
