/**
 * A process the allocation meter's test watches: it meters itself, throws away `ALLOC_MIB` MiB
 * in small arrays, keeps `KEEP_MIB` MiB, then says so in `READY` and waits to be stopped.
 */
import { writeFileSync } from "node:fs";
import { meterAllocations } from "../../bench/lib/alloc-meter.js";

const [meterFile, readyFile, allocMib, keepMib] = process.argv.slice(2);
await meterAllocations(meterFile as string);
const kept: number[][] = [];
let sink = 0;
for (let index = 0; index < Number(allocMib) * 128; index += 1) {
  // About 8 KiB each (1,000 doubles): garbage once the next one is made.
  const garbage = Array.from({ length: 1000 }, (_, at) => at + 0.5);
  sink += garbage.length;
}
for (let index = 0; index < Number(keepMib) * 128; index += 1) kept.push(Array.from({ length: 1000 }, (_, at) => at + 0.5));
writeFileSync(readyFile as string, String(sink + kept.length));
setInterval(() => kept.length, 60_000);
