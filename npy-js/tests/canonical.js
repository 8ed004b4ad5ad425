// Values in the canonical text numpy_values.py writes, made from JavaScript values. Plain
// ES module without Node's APIs, so the Node tests (through support.js) and the browser
// test's page compare with NumPy the same way.

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Bytes as lowercase hex, as Python's `bytes.hex()`. */
export function hex(bytes) {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** A float as numpy_values.py writes it: "nan", or the little-endian hex of the float64. */
export function canonicalFloat(x) {
  const v = Number(x);
  if (Number.isNaN(v)) return "nan";
  f64[0] = v;
  return hex(f64Bytes);
}

/**
 * A leaf's values (what `data` gives for an array of that leaf's dtype) as numpy_values.py
 * writes them.
 * @param {any} dtype the leaf's dtype tree
 * @param {any} data
 */
export function canonical(dtype, data) {
  const type = dtype.type;
  if (type.startsWith("c")) {
    const out = [];
    for (let i = 0; i < data.length; i += 2) out.push([canonicalFloat(data[i]), canonicalFloat(data[i + 1])]);
    return out;
  }
  if (type.startsWith("f")) return Array.from(data, canonicalFloat);
  if (type.startsWith("S") || type.startsWith("U")) return Array.from(data);
  if (type.startsWith("V")) return Array.from(data, hex);
  return Array.from(data, (v) => String(v));
}
