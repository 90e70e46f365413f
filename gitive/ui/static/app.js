// gitive ui: live updates over server-sent events, keyboard navigation, copy buttons and the theme switch.
// The pages are complete without it; this only adds.
"use strict";
(function () {
  const root = document.documentElement;
  const main = document.getElementById("main");
  const live = document.getElementById("live");

  // Theme: the OS decides unless the person chose; the choice is kept in this browser only.
  const saved = localStorage.getItem("gitive-theme");
  if (saved) root.dataset.theme = saved;
  const themeButton = document.getElementById("theme");
  function toggleTheme() {
    const dark = root.dataset.theme ? root.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
    localStorage.setItem("gitive-theme", root.dataset.theme);
  }
  if (themeButton) { themeButton.hidden = false; themeButton.addEventListener("click", toggleTheme); }

  function addCopyButtons(scope) {
    if (!navigator.clipboard) return;
    scope.querySelectorAll("code[data-copy]").forEach(function (code) {
      const button = document.createElement("button");
      button.type = "button"; button.className = "copy"; button.textContent = "copy";
      button.setAttribute("aria-label", "Copy " + code.dataset.copy);
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(code.dataset.copy).then(function () { button.textContent = "copied"; });
      });
      code.after(button);
    });
  }
  addCopyButtons(document);

  // Rows say what they show by one of these attributes, so a refresh puts the focus back on the same row.
  const ROW_KEYS = ["data-address", "data-lesson", "data-person", "data-obligation", "data-item"];

  // Live: on each change, fetch this page's main part again and swap it in, keeping what is being typed.
  let refreshing = false, again = false;
  async function refresh(version) {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const response = await fetch(location.href, { headers: { "X-Gitive-Fragment": "1" }, credentials: "same-origin" });
      if (response.ok) {
        const active = document.activeElement;
        const keep = active && main.contains(active) && active.id ? { id: active.id, value: active.value,
          start: active.selectionStart, end: active.selectionEnd } : null;
        const focusedRow = active && active.closest && active.closest("tr[tabindex]");
        const rowAttr = focusedRow ? ROW_KEYS.find(function (k) { return focusedRow.hasAttribute(k); }) : null;
        const rowKey = rowAttr ? focusedRow.getAttribute(rowAttr) : null;
        main.innerHTML = await response.text();
        addCopyButtons(main);
        if (keep) {
          const el = document.getElementById(keep.id);
          if (el) { if ("value" in el && keep.value !== undefined) el.value = keep.value; el.focus();
            if (keep.start != null && el.setSelectionRange) el.setSelectionRange(keep.start, keep.end); }
        } else if (rowKey) {
          const row = main.querySelector("tr[" + rowAttr + '="' + CSS.escape(rowKey) + '"]');
          if (row) row.focus();
        }
        document.body.dataset.version = String(version);
        live.textContent = "live · updated " + new Date().toLocaleTimeString();
      }
    } finally {
      refreshing = false;
      if (again) { again = false; refresh(version); }
    }
  }
  if (window.EventSource) {
    const events = new EventSource("/events");
    events.addEventListener("hello", function () { live.textContent = "live"; document.body.dataset.live = "1"; });
    events.addEventListener("change", function (e) { refresh(JSON.parse(e.data).version); });
    events.onerror = function () { live.textContent = "reconnecting…"; document.body.dataset.live = "0"; };
  }

  // Keys: 1–5 views, / search, j/k rows, Enter opens a row's link, t theme. Never while typing.
  const views = Array.from(document.querySelectorAll("nav a[data-key]"));
  document.addEventListener("keydown", function (e) {
    const t = e.target;
    if (e.altKey || e.ctrlKey || e.metaKey || (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))) return;
    const view = views.find(function (a) { return a.dataset.key === e.key; });
    if (view) { e.preventDefault(); location.href = view.href; return; }
    if (e.key === "/") {
      const q = document.getElementById("q");
      e.preventDefault();
      if (q) q.focus(); else location.href = "/memory#search";
      return;
    }
    if (e.key === "t") { toggleTheme(); return; }
    if (e.key === "j" || e.key === "k") {
      const rows = Array.from(main.querySelectorAll("tr[tabindex]"));
      if (!rows.length) return;
      const at = rows.indexOf(document.activeElement);
      const next = e.key === "j" ? Math.min(at + 1, rows.length - 1) : Math.max(at - 1, 0);
      e.preventDefault(); rows[at === -1 ? 0 : next].focus();
      return;
    }
    if (e.key === "Enter" && t && t.matches && t.matches("tr[tabindex]")) {
      const link = t.querySelector("a[href]");
      if (link) link.click();
    }
  });
})();
