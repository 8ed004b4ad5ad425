// A file's rows read a piece at a time, in order, with reads in flight while a piece is
// used, progress and cancel: what the statistics and the filter stream over.

/**
 * @typedef {import("../js/open.js").NpyFile} NpyFile
 * @typedef {import("../js/array.js").NpyArray} NpyArray
 */

/**
 * Bytes of rows read at a time: a File's slice costs a round trip to the browser's
 * process, which 32 MiB pieces make small next to their bytes (Chromium 156, a 1 GB
 * `<f8` column, four reads in flight: 16 MiB pieces 436-627 MB/s, 32 MiB 719-738, 64 MiB
 * 709-737), and a piece is counted in about 10 ms.
 */
export const PIECE_BYTES = 32 << 20;
/** Reads in flight while a piece is counted: the reads overlap the loop over the pieces before them. */
export const AHEAD = 4;
/** Thrown when a computation is cancelled. */
export class Cancelled extends Error {
  /** @param {number} done rows read before the cancel */
  constructor(done) {
    super(`cancelled after ${done.toLocaleString("en")} rows`);
    this.name = "Cancelled";
    this.done = done;
  }
}

/**
 * `promise`, or a Cancelled error as soon as `signal` aborts (the read's bytes are then
 * dropped when they come).
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal | undefined} signal
 * @param {number} done
 * @returns {Promise<T>}
 */
export function unlessAborted(promise, signal, done) {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(new Cancelled(done));
  return new Promise((resolve, reject) => {
    const stop = () => reject(new Cancelled(done));
    signal.addEventListener("abort", stop, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", stop);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", stop);
        reject(e);
      },
    );
  });
}

/**
 * @typedef {object} StreamOptions
 * @property {AbortSignal} [signal] stops the reads: none starts after it aborts, and the wait for one in flight ends at once
 * @property {(done: number, total: number) => void} [onProgress] told the rows read so far, and of how many
 * @property {number} [pieceBytes] bytes of rows a read takes (default PIECE_BYTES)
 */

/**
 * Reads the file's rows a piece at a time, in order, AHEAD reads in flight, and gives
 * each piece (an NpyArray of rows `start` on) to `each`.
 * @param {NpyFile} file
 * @param {(piece: NpyArray, start: number) => void} each
 * @param {StreamOptions} [options]
 */
export async function streamRows(file, each, { signal, onProgress, pieceBytes = PIECE_BYTES } = {}) {
  const total = file.rowCount;
  const rowBytes = Math.max(1, file.shape.slice(1).reduce((n, d) => n * d, 1) * file.dtype.itemsize);
  const step = Math.max(1, Math.floor(pieceBytes / rowBytes));
  /** @type {Promise<NpyArray>[]} */
  const reads = [];
  let next = 0;
  const more = () => {
    while (reads.length < AHEAD && next < total && !signal?.aborted) {
      const b = Math.min(total, next + step);
      const read = file.rows(next, b);
      // A read whose piece is never taken (a cancel, an earlier error) fails quietly.
      read.catch(() => {});
      reads.push(read);
      next = b;
    }
  };
  let done = 0;
  onProgress?.(0, total);
  more();
  while (done < total) {
    if (signal?.aborted) throw new Cancelled(done);
    const piece = await unlessAborted(/** @type {Promise<NpyArray>} */ (reads.shift()), signal, done);
    more();
    each(piece, done);
    done += piece.rowCount;
    onProgress?.(done, total);
  }
}
