export { WriteAheadLog, DEFAULT_SEGMENT_BYTES, type WriteAheadLogOptions, type LoggedJob } from "./log.js";
export { encodeEntry, encodeJobLine, decodeChunk, decodeLine, type WalEntry, type DecodedChunk } from "./record.js";
