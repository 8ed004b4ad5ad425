// The npy package's types: NumPy's .npy and .npz files in JavaScript (npy-js/README.md).
// The data types (dtypes, values, options) are defined here alone, and the JSDoc of js/
// names them; the functions and classes are js/'s, declared here for editors and checked
// against the JSDoc by index.check.ts (`tsc -p .`), so the two cannot drift apart.

/** A typed array of an array's values, as `NpyArray.data` gives them. */
export type TypedValues =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

/**
 * An array's values in storage order: a typed array for numbers (`BigInt64Array` for
 * 64-bit integers and datetimes, `Float16Array` for half floats where the platform has
 * it, else `Float32Array`; complex numbers as interleaved real and imaginary parts; long
 * doubles as the nearest doubles; booleans as their bytes), `string[]` for `S` and `U`,
 * `Uint8Array[]` for `V`, and JavaScript values for objects.
 */
export type Values = TypedValues | string[] | Uint8Array[] | unknown[];

/**
 * A NumPy masked array (`np.ma.MaskedArray`) among an object array's values: its data and
 * mask (of the data's shape; a record of booleans for a record dtype), and the fill value it
 * was given (a 0-d array), or `null` when it had none. (A `deque` is an `Array`, a
 * `defaultdict` a plain object or `Map`, a `zoneinfo.ZoneInfo` `{pytype, repr}`.)
 */
export interface MaskedArrayValue {
  pytype: "numpy.ma.MaskedArray";
  data: NpyArray;
  mask: NpyArray;
  fillValue: NpyArray | null;
}

/** A scalar dtype: `<f8`, `|S5`, `>M8[ns]`. */
export interface ScalarDType {
  kind: "scalar";
  /** The dtype as a header's `descr` holds it: `'<f8'`. */
  descr: string;
  itemsize: number;
  /** NumPy's `dtype.str`: `<f8`, `|b1`, `<U5`, `<M8[ns]`. */
  str: string;
  /** The type without byte order: `f8`, `b1`, `U5`, `M8`, `O`. */
  type: string;
  byteOrder: "<" | ">" | "|";
  /** A datetime's or timedelta's unit: `ns`, `D`, `25s`, `generic`. */
  unit?: string;
}

/** A field of a record dtype. */
export interface Field {
  name: string;
  /** Its title, if any (a non-str title as its Python repr). */
  title: string | null;
  /** Its byte offset in the record. */
  offset: number;
  dtype: DType;
}

/** A record (structured) dtype. */
export interface RecordDType {
  kind: "record";
  descr: string;
  itemsize: number;
  fields: Field[];
  /** The bytes no field covers: what NumPy writes as `('', '|Vn')` entries. */
  padding: { offset: number; size: number }[];
}

/** A subarray dtype, inside a record: `('<f4', (64,))`. */
export interface SubArrayDType {
  kind: "subarray";
  descr: string;
  itemsize: number;
  base: DType;
  shape: number[];
}

export type DType = ScalarDType | RecordDType | SubArrayDType;

/** An error of the package: what went wrong (`kind`), in which file and member. */
export class NpyError extends Error {
  /**
   * npy-core's kinds: `format`, `header`, `header_too_large`, `dtype`, `unsupported_dtype`,
   * `shape`, `truncated`, `invalid_value`, `pickle`, `npz`, `io`, `usage`, and `internal`
   * for a bug of ours.
   */
  kind: string;
  /** The file, `Blob` or URL, as the caller named it (`name`) or the package knew it. */
  file?: string;
  /** The archive's member. */
  member?: string;
  /** A record's field (dotted path). */
  field?: string;
  constructor(message: string, details?: { kind?: string; file?: string; member?: string; field?: string; cause?: unknown });
}

export interface LoadOptions {
  /** The file's name, for errors. */
  name?: string;
  /** The longest header read, in bytes (default 16 MiB). */
  maxHeaderSize?: number;
  /** The memory an object array's values may take, in bytes (default 128 MiB plus 4 bytes per pickle byte). */
  maxObjectBytes?: number;
}

/** What an array and an opened file say of their header. */
interface Described {
  /** The dtype as the header's `descr` holds it: `'<f8'`, `[('x', '<f4'), ...]`. */
  readonly descr: string;
  /** The dtype as a tree, frozen (the arrays of one header share it). */
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Whether the data is in Fortran order (an array's `data` is in the same order). */
  readonly fortranOrder: boolean;
  /** The format version, `[major, minor]`. */
  readonly version: readonly [number, number];
  /** The header text as the file holds it: the dict, its padding and the newline. */
  readonly header: string;
  /** A record's fields by dotted path (`[]` for other dtypes). */
  readonly fields: string[];
  /**
   * Every scalar the dtype holds, a column each: `path` the dotted field path (`""` for a
   * plain array), `dtype` the scalar's, `dims` a subarray field's shape (`[]` for none).
   */
  readonly leaves: readonly { path: string; dtype: ScalarDType; dims: readonly number[] }[];
  /** Rows along the first axis (1 for a 0-d array). */
  readonly rowCount: number;
}

/** One array: a header (dtype, shape, order) and its data's bytes. */
export interface NpyArray extends Described {}
export class NpyArray {
  private constructor();
  /** Elements (1 for a 0-d array). */
  readonly size: number;
  /** The data's bytes as stored (a view on the input where it can be). */
  readonly bytes: Uint8Array;
  /** The values of a non-record array, in storage order (see `Values`). */
  readonly data: Values;
  /** A record's field as an array of its own, of shape `shape` + the field's subarray dims. */
  column(path: string): NpyArray;
  /** Every field, read in one pass. */
  columns(): Record<string, NpyArray>;
  /** Elements `start` to `end` (storage order) as objects: a record's fields by name. */
  rows(start?: number, end?: number): unknown[];
  /**
   * Rows `start` to `end` along the first axis as NumPy prints them: per row, a string per
   * column, a column a field (`value` for a plain array) and its cell NumPy's `str()` of the
   * row's part of it; with `split`, each scalar of a field's values a column of its own.
   */
  table(start?: number, end?: number, options?: { split?: boolean }): { columns: string[]; rows: string[][] };
}

/** Loads a `.npy` file's bytes: the header now, values when asked for. */
export function load(bytes: ArrayBuffer | ArrayBufferView, options?: LoadOptions): NpyArray;

/** An array to write: a typed array's values, a plain array's, or a record's columns or rows. */
export interface ArraySpec {
  /** A type string (`<f8`, `>i4`, `<U5`, `<M8[ns]`), NumPy's name (`float64`) or a record's descr; inferred from a typed array or NpyArray `data`. */
  dtype?: string;
  /** Default: 1-D, as many elements as given. */
  shape?: readonly number[];
  /** Whether the values are in Fortran order (default false). */
  fortranOrder?: boolean;
  /** A non-record array's values, in storage order (as `data` gives them, or a plain array). */
  data?: Values | readonly (number | bigint | boolean | string | null | unknown)[] | NpyArray;
  /** A record's values by field path, each as `column(path).data` gives them (or a plain array, or the NpyArray). */
  columns?: Record<string, Values | readonly unknown[] | NpyArray>;
  /** A record's elements as objects, as `rows()` gives them. */
  rows?: readonly Record<string, unknown>[];
}

export interface SaveOptions {
  /** The format version to write, when the header fits it (default: the oldest that fits, as np.save chooses). */
  version?: readonly [number, number];
}

/** The bytes `np.save` writes for an array. */
export function save(array: NpyArray | TypedValues | ArraySpec, options?: SaveOptions): Uint8Array;

export type Compression = "stored" | "deflate" | "zstd";

/** An archive's member, as its directory says. */
export interface MemberInfo {
  /** The array's name (`np.load(f).files`: the member's without `.npy`). */
  name: string;
  /** The member's name in the zip. */
  member: string;
  compression: Compression;
  /** Bytes in the archive. */
  compressedSize: number;
  /** Bytes when read. */
  size: number;
  /** Where its data starts in the archive. */
  dataStart: number;
  /** Its CRC-32, as the directory says. */
  crc32: number;
}

/** `load`'s options (`name` the archive's; the others for members) and the directory's. */
export interface NpzOptions extends LoadOptions {
  /** The most members accepted (default 65,536). */
  maxEntries?: number;
  /** The most bytes the compressed members may claim in all (default 64 GiB). */
  maxInflatedSize?: number;
}

/** Loads an `.npz` archive's bytes: the directory now, members when asked for. */
export function loadNpz(bytes: ArrayBuffer | ArrayBufferView, options?: NpzOptions): NpzArchive;

/** What an archive in memory and an opened one say of their directory. */
interface Members {
  /** The arrays' names, as `np.load(f).files`. */
  readonly names: string[];
  /** Each member as the directory describes it. */
  readonly members: MemberInfo[];
  has(name: string): boolean;
  /** Member `name`'s directory entry (an NpyError listing the names there are, when there is none). */
  member(name: string): MemberInfo;
}

/** An archive in memory. */
export interface NpzArchive extends Members {}
export class NpzArchive implements Iterable<[string, NpyArray]> {
  private constructor();
  /** Member `name`, read now (decompressed and checked) or from an earlier `get`. */
  get(name: string): NpyArray;
  [Symbol.iterator](): Iterator<[string, NpyArray]>;
}

/**
 * Writes an `.npz` archive in memory, an array at a time: Zstandard members by default (as
 * Python's `npy.NpzWriter`), `"deflate"` as `np.savez_compressed`, `"stored"` as `np.savez`.
 */
export class NpzWriter {
  /** `level`: zstd 1 to 22 (default 8), deflate 1 to 9 (default 6). */
  constructor(options?: { compression?: Compression; level?: number });
  add(name: string, array: NpyArray | TypedValues | ArraySpec, options?: { compression?: Compression; level?: number }): this;
  /** The archive's bytes. */
  finish(): Uint8Array;
}

/** Bytes read by ranges: hyparquet's AsyncBuffer, or a reader of ranges. */
export type RangedSource =
  | { byteLength: number; slice(start: number, end: number): ArrayBuffer | Uint8Array | Promise<ArrayBuffer | Uint8Array>; name?: string }
  | { byteLength: number; read(start: number, end: number): Promise<ArrayBuffer | Uint8Array>; name?: string };

export interface OpenOptions extends NpzOptions {
  /** For a URL: what `fetch` is given besides the Range header. */
  fetchOptions?: RequestInit;
}

/**
 * Opens a `.npy` or `.npz` file without reading it all: bytes, a Blob or File, a URL
 * (HTTP range requests), a path or FileHandle (Node), or any RangedSource.
 */
export function open(source: ArrayBuffer | ArrayBufferView | Blob | URL | string | RangedSource | object, options?: OpenOptions): Promise<NpyFile | NpzFile>;

/** An `.npy` file opened by `open`. */
export interface NpyFile extends Described {}
export class NpyFile {
  private constructor();
  readonly kind: "npy";
  readonly name: string | undefined;
  readonly dataOffset: number;
  /** The whole array. */
  read(): Promise<NpyArray>;
  /** Rows `start` to `end` along the first axis, read by ranges. */
  rows(start: number, end?: number): Promise<NpyArray>;
  /**
   * NumPy's basic indexing, `a[...]`, read by ranges: an entry per axis (missing trailing
   * ones mean the whole axis): a number (that index, the axis dropped; negative counts from
   * the end), `null` (the whole axis) or `[start, stop, step?]` (0 <= start <= stop <= the
   * axis's length, step >= 1). The result is in C order; only the selected elements' bytes
   * are read (runs less than 64 KiB apart as one read of at most 16 MiB, 8 in flight).
   */
  select(index: readonly (number | null | readonly [number, number, number?])[], options?: { signal?: AbortSignal }): Promise<NpyArray>;
  close(): Promise<void>;
}

/** An `.npz` archive opened by `open`. */
export interface NpzFile extends Members {}
export class NpzFile {
  private constructor();
  readonly kind: "npz";
  readonly name: string | undefined;
  readonly byteLength: number;
  /** Member `name`, read whole, decompressed as a stream and checked. */
  get(name: string, options?: { onProgress?: (done: number, total: number) => void }): Promise<NpyArray>;
  /** Member `name` as an NpyFile (a stored member's rows by ranges). */
  open(name: string, options?: { onProgress?: (done: number, total: number) => void }): Promise<NpyFile>;
  close(): Promise<void>;
}
