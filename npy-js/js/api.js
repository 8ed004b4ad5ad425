// The package's API, the same from every entry point (index.js for browsers and bundlers,
// node.js for Node), which bind the WebAssembly module first.

export { NpyError } from "./errors.js";
export { NpyArray, load } from "./array.js";
export { save } from "./save.js";
export { NpzArchive, NpzWriter, loadNpz } from "./npz.js";
export { NpyFile, NpzFile, open } from "./open.js";
