// Keeps the viewer, the npy package and its WebAssembly module, so the page opens offline
// once it has been loaded. Files the page reads (by ranges, or whole) are never cached:
// only these assets are, fetched again in the background to stay fresh.

const CACHE = "npy-viewer-v3";
const ASSETS = [
  "./",
  "index.html",
  "viewer.css",
  "viewer.js",
  "array.js",
  "exports.js",
  "filter.js",
  "header.js",
  "image.js",
  "colormaps.json",
  "slice.js",
  "matrix.js",
  "plot.js",
  "rows.js",
  "state.js",
  "stats.js",
  "moments.js",
  "stream.js",
  "../js/index.js",
  "../js/api.js",
  "../js/array.js",
  "../js/described.js",
  "../js/dtypes.js",
  "../js/errors.js",
  "../js/npz.js",
  "../js/open.js",
  "../js/source.js",
  "../js/wasm.js",
  "../wasm/npy_js.js",
  "../wasm/npy_js_bg.wasm",
].map((path) => new URL(path, self.location.href).href);

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
