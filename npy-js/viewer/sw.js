// Keeps the viewer, the npy package and its WebAssembly module, so the page opens offline
// once it has been loaded. Files the page reads (by ranges, or whole) are never cached:
// only these assets are, fetched again in the background to stay fresh. The build writes
// the list from the files there are, and a new cache's version when it changes (so that
// browsers drop the old cache); `cargo xtask js --test` fails when it is out of date.

// BEGIN the files kept: written by `cargo xtask js` (xtask/src/js.rs), not by hand.
const CACHE = "npy-viewer-v4";
const FILES = [
  "./",
  "array.js",
  "colormaps.json",
  "exports.js",
  "filter.js",
  "header.js",
  "image.js",
  "index.html",
  "matrix.js",
  "moments.js",
  "plot.js",
  "rows.js",
  "slice.js",
  "state.js",
  "stats.js",
  "stream.js",
  "viewer.css",
  "viewer.js",
  "../js/api.js",
  "../js/array.js",
  "../js/bytes.js",
  "../js/described.js",
  "../js/dtypes.js",
  "../js/errors.js",
  "../js/header.js",
  "../js/index.js",
  "../js/npz.js",
  "../js/open.js",
  "../js/save.js",
  "../js/source.js",
  "../js/wasm.js",
  "../wasm/npy_js.js",
  "../wasm/npy_js_bg.wasm",
];
// END the files kept.
const ASSETS = FILES.map((path) => new URL(path, self.location.href).href);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(ASSETS)));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys().then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k)))),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || request.headers.has("range") || !ASSETS.includes(request.url)) return;
  event.respondWith(
    caches.open(CACHE).then(async (cache) => {
      const cached = await cache.match(request);
      const fresh = fetch(request)
        .then((response) => {
          if (response.ok) cache.put(request, response.clone());
          return response;
        })
        .catch(() => cached);
      return cached ?? fresh;
    }),
  );
});
