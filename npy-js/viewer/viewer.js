// The npy viewer: NumPy's .npy and .npz files opened in the page with the npy package, a
// tab each. Files are read by ranges (a File's slices, a URL's HTTP ranges): the header
// and an archive's directory at once, then only what a view shows. This module opens files
// and archives' members into tabs; array.js shows an array. Nothing leaves the browser.
// `window.npyViewer` (state.js) tells tests and the bench what happened.

import { NpyError, open } from "../js/index.js";
import { showArray } from "./array.js";
import { $, showError, stats } from "./state.js";

/** The most bytes a compressed member may inflate to: it is held in memory. */
const MAX_INFLATED = 1 << 30;

const tabs = $(document, "#tabs");
const panels = $(document, "#panels");
/** @type {HTMLTemplateElement} */
const template = $(document, "#panel");

/** @typedef {import("./state.js").Tab} Tab */

// ---------------------------------------------------------------------------------------
// Opening files

/** @param {File} file */
function counted(file) {
  stats.bytesRead[file.name] ??= 0;
  return {
    name: file.name,
    byteLength: file.size,
    slice: async (/** @type {number} */ start, /** @type {number} */ end) => {
      stats.bytesRead[file.name] += end - start;
      return file.slice(start, end).arrayBuffer();
    },
  };
}

/**
 * Opens `source` (a counted File, or a URL) in a new tab named `name`.
 * @param {unknown} source
 * @param {string} name
 * @param {Blob} [blob] the File that `source` reads
 */
async function openTab(source, name, blob) {
  const tab = addTab(name);
  tab.blob = blob;
  const began = performance.now();
  try {
    const opened = await open(/** @type {Parameters<typeof open>[0]} */ (source), { name });
    if (opened.kind === "npz") {
      tab.archive = opened;
      showMembers(tab, opened);
    } else {
      await showArray(tab, opened, name, began, blob);
    }
  } catch (e) {
    showError(tab.panel, e);
  }
  return tab;
}

/** @param {string} name */
function addTab(name) {
  document.getElementById("drop")?.setAttribute("hidden", "");
  const panel = /** @type {HTMLElement} */ (template.content.firstElementChild?.cloneNode(true));
  const id = `tab-${stats.tabs.length}`;
  panel.id = `${id}-panel`;
  panel.setAttribute("aria-labelledby", id);
  const button = document.createElement("button");
  button.type = "button";
  button.id = id;
  button.setAttribute("role", "tab");
  button.setAttribute("aria-controls", panel.id);
  button.textContent = name;
  button.addEventListener("click", () => select(tab));
  button.addEventListener("keydown", (event) => {
    const i = stats.tabs.indexOf(tab);
    const next = event.key === "ArrowRight" ? i + 1 : event.key === "ArrowLeft" ? i - 1 : -1;
    if (next >= 0 && next < stats.tabs.length) {
      select(stats.tabs[next]);
      stats.tabs[next].button.focus();
    }
  });
  tabs.append(button);
  panels.append(panel);
  /** @type {Tab} */
  const tab = { name, button, panel };
  stats.tabs.push(tab);
  select(tab);
  return tab;
}

/** @param {Tab} tab */
function select(tab) {
  for (const t of stats.tabs) {
    const on = t === tab;
    t.button.setAttribute("aria-selected", String(on));
    t.button.tabIndex = on ? 0 : -1;
    t.panel.hidden = !on;
  }
}


/**
 * @param {Tab} tab
 * @param {import("../js/open.js").NpzFile} archive
 */
function showMembers(tab, archive) {
  const box = $(tab.panel, ".members");
  const body = $(box, "tbody");
  box.hidden = false;
  for (const m of archive.members) {
    const row = document.createElement("tr");
    const cells = [m.name, m.compression, m.compressedSize.toLocaleString("en"), m.size.toLocaleString("en")];
    for (const [i, text] of cells.entries()) {
      const td = document.createElement("td");
      td.textContent = text;
      if (i >= 2) td.className = "n";
      row.append(td);
    }
    const open = document.createElement("button");
    open.type = "button";
    open.textContent = "Show";
    open.dataset.member = m.name;
    open.addEventListener("click", () => showMember(tab, archive, m.name, row));
    const td = document.createElement("td");
    td.append(open);
    row.append(td);
    body.append(row);
  }
  if (archive.members.length > 0) showMember(tab, archive, archive.members[0].name, /** @type {HTMLElement} */ (body.firstElementChild));
}

/**
 * Shows member `name` of an archive: a stored one read by ranges, a compressed one
 * decompressed as a stream first, with its progress.
 * @param {Tab} tab
 * @param {import("../js/open.js").NpzFile} archive
 * @param {string} name
 * @param {HTMLElement} row
 */
async function showMember(tab, archive, name, row) {
  for (const r of row.parentElement?.children ?? []) r.removeAttribute("aria-current");
  row.setAttribute("aria-current", "true");
  const progress = $(tab.panel, ".progress");
  /** @type {HTMLProgressElement} */
  const bar = $(progress, "progress");
  const text = $(progress, "span");
  const began = performance.now();
  const info = archive.member(name);
  try {
    // A compressed member is inflated into this page's memory: within reason, asked
    // before any of it is (the decoder holds a member to the size it claims).
    if (info.compression !== "stored" && info.size > MAX_INFLATED) {
      throw new NpyError(
        `reading '${tab.name}': member '${info.member}' inflates to ${info.size.toLocaleString("en")} bytes; ` +
          `this page inflates ${MAX_INFLATED.toLocaleString("en")} at most, in memory (a stored member of any size is read by ranges)`,
        { kind: "usage" },
      );
    }
    const member = await archive.open(name, {
      onProgress: (/** @type {number} */ done, /** @type {number} */ total) => {
        progress.hidden = false;
        bar.value = done / total;
        text.textContent = `decompressing ${name}: ${Math.round((100 * done) / total)}%`;
      },
    });
    progress.hidden = true;
    // A stored member of a File is a slice of it, saved as it is.
    const npy = tab.blob && info.compression === "stored" ? tab.blob.slice(info.dataStart, info.dataStart + info.size) : undefined;
    await showArray(tab, member, `${tab.name}: ${name}`, began, npy);
  } catch (e) {
    progress.hidden = true;
    $(tab.panel, ".array").hidden = true;
    showError(tab.panel, e);
  }
}


// ---------------------------------------------------------------------------------------
// The page

/** @type {HTMLInputElement} */
const files = $(document, "#files");
files.addEventListener("change", () => {
  for (const file of files.files ?? []) openTab(counted(file), file.name, file);
  files.value = "";
});
$(document, "#url-form").addEventListener("submit", (event) => {
  event.preventDefault();
  /** @type {HTMLInputElement} */
  const input = $(document, "#url");
  const url = new URL(input.value, location.href).href;
  openTab(url, url);
});
addEventListener("dragover", (event) => {
  event.preventDefault();
  document.body.classList.add("dragging");
});
addEventListener("dragleave", () => document.body.classList.remove("dragging"));
addEventListener("drop", (event) => {
  event.preventDefault();
  document.body.classList.remove("dragging");
  for (const file of event.dataTransfer?.files ?? []) openTab(counted(file), file.name, file);
});

// Offline once loaded: the page, the package and its module are kept by a service worker.
if ("serviceWorker" in navigator && location.protocol !== "file:") {
  navigator.serviceWorker.register("sw.js").catch(() => {});
}

stats.open = openTab;
stats.readyMs = performance.now();
stats.ready = true;
