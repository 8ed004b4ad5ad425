// The entry point for browsers and bundlers: the WebAssembly module fetched beside this
// package's files and instantiated before the API is used (top-level await).

import init from "../wasm/npy_js.js";
import { ready } from "./wasm.js";

await init({ module_or_path: new URL("../wasm/npy_js_bg.wasm", import.meta.url) });
ready();

export * from "./api.js";
