// The README's first program, type-checked: a record file's header, a field as a typed
// array, a row as an object, and an array written back for NumPy.
import { readFileSync, writeFileSync } from "node:fs";
import { load, loadNpz, save, NpzWriter, open, NpyError, type NpyArray } from "npy";

const traces: NpyArray = load(readFileSync("target/seismic/traces.npy"));
console.log(traces.shape, traces.fields);
const t0 = traces.column("t0").data as Float64Array;
const samples = traces.column("samples"); // shape [n, 64]
console.log(t0[0], samples.shape, traces.rows(0, 1)[0]);

const speeds = save(new Float64Array([1.5, 2.5, 4]));
const shots = save({ dtype: "[('id', '<u4'), ('t0', '<f8')]", rows: [{ id: 1, t0: 0.5 }] });
writeFileSync("target/npy-js/shots.npy", shots);

const archive = new NpzWriter({ compression: "deflate" }).add("speeds", load(speeds)).add("t0", traces.column("t0")).finish();
console.log(loadNpz(archive).names);

const file = await open("target/seismic/traces.npy");
if (file.kind === "npy") {
  const rows = await file.rows(999_999, 1_000_000);
  console.log(rows.column("trace_id").data);
  await file.close();
}
try {
  load(new Uint8Array(10));
} catch (e) {
  if (e instanceof NpyError) console.log(e.kind, e.message);
}
