// crtx dashboards: sign-in with a browser wallet (wallet.js) or an Ed25519
// key kept in this browser (a devnet convenience), copy buttons, and in-browser verification of
// results. Pages read without it; it only adds these.
const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
function b58encode(bytes) {
  const digits = []; // base 58, least significant first
  for (const b of bytes) {
    let carry = b;
    for (let i = 0; i < digits.length; i++) { carry += digits[i] * 256; digits[i] = carry % 58; carry = Math.floor(carry / 58); }
    while (carry) { digits.push(carry % 58); carry = Math.floor(carry / 58); }
  }
  let out = "";
  for (const b of bytes) { if (b !== 0) break; out += "1"; }
  for (let i = digits.length - 1; i >= 0; i--) out += B58[digits[i]];
  return out;
}
const b64u = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromB64u = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

async function newKey() {
  const kp = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  return crypto.subtle.exportKey("jwk", kp.privateKey);
}
// A Solana CLI key file is a JSON array of the 32-byte seed and the 32-byte
// public key. What is wrong with a pasted one is said in words, and a file
// whose halves do not belong together is refused before it signs anything.
async function jwkFromSolana(text) {
  const bad = (why) => new Error("That is not a usable key file: " + why);
  let a;
  try { a = JSON.parse(text); } catch { throw bad("paste the whole file, a JSON array of 64 numbers such as [12,250,…]."); }
  if (!Array.isArray(a) || a.length !== 64) throw bad("a key file holds 64 numbers; this holds " + (Array.isArray(a) ? a.length : "no array") + ".");
  if (!a.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) throw bad("every number is a byte, 0 to 255.");
  const b = Uint8Array.from(a);
  const pkcs8 = Uint8Array.from([0x30, 0x2e, 2, 1, 0, 0x30, 5, 6, 3, 0x2b, 0x65, 0x70, 4, 0x22, 4, 0x20, ...b.slice(0, 32)]);
  const own = await crypto.subtle.exportKey("jwk", await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]));
  if (own.x !== b64u(b.slice(32))) throw bad("its public half (the last 32 numbers) does not belong to its secret half; is it whole?");
  return { kty: "OKP", crv: "Ed25519", d: own.d, x: own.x, ext: true, key_ops: ["sign"] };
}
function solanaFromJwk(jwk) { return JSON.stringify([...fromB64u(jwk.d), ...fromB64u(jwk.x)]); }
const addressOf = (jwk) => b58encode(fromB64u(jwk.x));

async function signIn(jwk) {
  const wallet = addressOf(jwk);
  const post = (path, body) => fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
    .then(async (r) => { const j = await r.json(); if (!r.ok) throw new Error(j.error ? j.error.message : r.statusText); return j; });
  const ch = await post("/v1/auth/challenge", { wallet });
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
  const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", key, new TextEncoder().encode(ch.message)));
  const s = await post("/v1/auth/session", { wallet, message: ch.message, signature: b58encode(sig) });
  const form = document.getElementById("token-form");
  form.elements.token.value = s.session_token;
  form.submit();
}

// listingStatement is the listing statement of a listing form
// (docs/creators.md), the RFC 8785 JSON of an object of strings. For such
// an object with ASCII member names, that is JSON.stringify with the members
// in sorted order. The values are the form's as the server reads them:
// trimmed, and the price as Number#toString writes it, which is how crtx
// writes amounts; the nonce and the marketplace are those the page was
// served with. An edit form names its agent (data-agent-id) and the key
// transaction it replaces, and signs the key change; the marketplace
// ignores the signatures when the key stays.
function listingStatement(wallet, form) {
  const v = (name) => form.elements[name].value.trim();
  const stmt = { creator: wallet, listing_nonce: v("listing_nonce"), marketplace: v("marketplace"), signing_public_key: v("signing_public_key") };
  if (form.dataset.agentId) Object.assign(stmt, { kind: "ListingUpdated", agent_id: form.dataset.agentId },
    v("replaces") ? { replaces: v("replaces") } : {});
  else {
    Object.assign(stmt, { kind: "AgentListed", name: v("name"), price_per_call_usdc: String(Number(v("price_per_call_usdc"))) });
    // A metered listing's three prices are all signed.
    if (form.elements.pricing_model && v("pricing_model") === "metered") Object.assign(stmt, { pricing_model: "metered",
      price_per_1k_tokens_usdc: String(Number(v("price_per_1k_tokens_usdc"))), max_price_per_call_usdc: String(Number(v("max_price_per_call_usdc"))) });
  }
  const sorted = Object.fromEntries(Object.keys(stmt).sort().map((k) => [k, stmt[k]]));
  return new TextEncoder().encode(JSON.stringify(sorted));
}
async function signBase58(jwk, bytes) {
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
  return b58encode(new Uint8Array(await crypto.subtle.sign("Ed25519", key, bytes)));
}

function status(msg, bad, id = "login-status") {
  const el = document.getElementById(id);
  if (el) { el.textContent = msg; el.className = bad ? "error" : "ok"; }
}

// The sign-in page lists the browser's wallets (wallet.js), each a button
// with its icon and name, as they register, and signs in with the one
// chosen.
function walletList() {
  const list = document.getElementById("wallet-list");
  if (!list || !window.crtxWallet) return;
  const say = (msg, bad) => status(msg, bad, "wallet-status");
  let busy = false;
  const render = () => {
    const wallets = crtxWallet.wallets();
    const last = crtxWallet.remembered();
    list.replaceChildren(...wallets.map((w) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "wallet";
      b.dataset.wallet = w.name;
      const src = crtxWallet.icon(w);
      if (src) {
        const img = document.createElement("img");
        img.src = src; img.alt = ""; img.width = 28; img.height = 28;
        b.append(img);
      }
      b.append(document.createTextNode(w.name));
      if (w === last) { const m = document.createElement("span"); m.className = "muted"; m.textContent = " (last used)"; b.append(m); }
      b.addEventListener("click", async () => {
        if (busy) return;
        busy = true;
        list.querySelectorAll("button").forEach((x) => { x.disabled = true; });
        b.setAttribute("aria-busy", "true");
        try {
          const s = await crtxWallet.signIn(w, (msg) => say(msg));
          say("Signed in as " + s.wallet + ".");
          const form = document.getElementById("token-form");
          form.elements.token.value = s.session_token;
          form.submit();
        } catch (e) {
          say(e.message, true);
          busy = false;
          b.removeAttribute("aria-busy");
          list.querySelectorAll("button").forEach((x) => { x.disabled = false; });
        }
      });
      const li = document.createElement("li");
      li.append(b);
      return li;
    }));
    document.getElementById("no-wallet").hidden = wallets.length > 0;
  };
  crtxWallet.onChange(render);
  render();
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-copy]").forEach((b) => b.addEventListener("click", () => {
    navigator.clipboard.writeText(document.getElementById(b.dataset.copy).textContent.trim()); b.textContent = "Copied";
  }));
  // Code in several languages is one block with a tab per language; the
  // language chosen is kept for the next page. Without this script every
  // language shows, each under its heading.
  document.querySelectorAll("[data-tabs]").forEach((group) => {
    const panels = [...group.querySelectorAll(":scope > [data-tab]")];
    const key = "crtx-tab-" + group.dataset.tabs;
    const list = document.createElement("div");
    list.setAttribute("role", "tablist");
    list.className = "tablist";
    const tabs = panels.map((p, i) => {
      const b = document.createElement("button");
      b.type = "button"; b.className = "tab"; b.textContent = p.dataset.tab;
      b.id = p.id + "-tab"; b.setAttribute("role", "tab"); b.setAttribute("aria-controls", p.id);
      p.setAttribute("role", "tabpanel"); p.setAttribute("aria-labelledby", b.id);
      const h = p.querySelector(":scope > h3, :scope > h5"); if (h) h.hidden = true;
      b.addEventListener("click", () => show(i, true));
      b.addEventListener("keydown", (ev) => {
        const d = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
        if (d) { ev.preventDefault(); show((i + d + panels.length) % panels.length, true); tabs[(i + d + panels.length) % panels.length].focus(); }
      });
      list.append(b);
      return b;
    });
    const show = (n, keep) => {
      panels.forEach((p, i) => { p.hidden = i !== n; tabs[i].setAttribute("aria-selected", String(i === n)); tabs[i].tabIndex = i === n ? 0 : -1; });
      if (keep) localStorage.setItem(key, panels[n].dataset.tab);
    };
    group.prepend(list);
    show(Math.max(0, panels.findIndex((p) => p.dataset.tab === localStorage.getItem(key))), false);
  });
  // The catalog's sort and filters apply as soon as they change.
  document.querySelectorAll("[data-autosubmit]").forEach((el) => el.addEventListener("change", () => el.form.requestSubmit()));
  walletList();
  const saved = localStorage.getItem("crtx-wallet");
  const here = document.getElementById("browser-wallet");
  if (here && saved) here.textContent = "Wallet in this browser: " + addressOf(JSON.parse(saved));
  const gen = document.getElementById("generate-wallet");
  if (gen) gen.addEventListener("click", async () => {
    try {
      const jwk = saved ? JSON.parse(saved) : await newKey();
      localStorage.setItem("crtx-wallet", JSON.stringify(jwk));
      status("Signing in as " + addressOf(jwk) + "…");
      await signIn(jwk);
    } catch (e) { status(e.message, true); }
  });
  const imp = document.getElementById("import-wallet");
  if (imp) imp.addEventListener("click", async () => {
    try {
      const jwk = await jwkFromSolana(document.getElementById("import-key").value);
      localStorage.setItem("crtx-wallet", JSON.stringify(jwk));
      await signIn(jwk);
    } catch (e) { status(e.message, true); }
  });
  // A form asks before what cannot be undone, and is sent once: its buttons
  // are disabled while it goes (the server refuses a replay anyway).
  document.querySelectorAll("form[method=post]").forEach((form) => form.addEventListener("submit", (ev) => {
    if (form.dataset.confirm && !confirm(form.dataset.confirm)) { ev.preventDefault(); return; }
    if (form.dataset.sending) { ev.preventDefault(); return; }
    form.dataset.sending = "1";
    setTimeout(() => form.querySelectorAll("button").forEach((b) => { b.disabled = true; b.setAttribute("aria-busy", "true"); }));
  }));
  // An agent page's run goes asynchronous with this script: the page it
  // lands on follows the run (funds.js) and counts the seconds it has
  // taken. Without the script, the run is synchronous and lands ended.
  document.querySelectorAll("form[data-async]").forEach((form) => form.addEventListener("submit", () => {
    if (form.elements.async) return;
    const a = document.createElement("input");
    a.type = "hidden"; a.name = "async"; a.value = "1";
    form.append(a);
  }));
  setInterval(() => document.querySelectorAll("[data-since]").forEach((el) => {
    el.textContent = Math.max(0, Math.floor((Date.now() - Number(el.dataset.since)) / 1000)) + " s";
  }), 1000);
  // What a page shows once (a new key's secret) is gone when Back or
  // Forward restores the page from memory instead of loading it again.
  window.addEventListener("pageshow", (ev) => { if (ev.persisted) document.querySelectorAll("[data-once]").forEach((el) => el.remove()); });
  window.addEventListener("pageshow", () => document.querySelectorAll("form[data-sending]").forEach((form) => {
    delete form.dataset.sending;
    form.querySelectorAll("button").forEach((b) => { b.disabled = false; b.removeAttribute("aria-busy"); });
  }));
  // Listing forms are signed on submit with the wallet key kept here
  // (creator_signature) and with the agent's key file pasted into the form
  // (key_signature), which has no name and so is never sent; a form without
  // them goes unsigned and the marketplace's answer says what to sign.
  document.querySelectorAll("form[data-sign-listing]").forEach((form) => form.addEventListener("submit", async (ev) => {
    const jwk = localStorage.getItem("crtx-wallet");
    if (!jwk || ev.defaultPrevented) return;
    ev.preventDefault();
    const wallet = JSON.parse(jwk);
    const pasted = form.querySelector("[data-agent-key]");
    try {
      if (pasted && pasted.value.trim()) {
        const agent = await jwkFromSolana(pasted.value.trim());
        const pk = form.elements.signing_public_key;
        if (!pk.value.trim()) pk.value = addressOf(agent);
        if (pk.value.trim() === addressOf(agent)) form.elements.key_signature.value = await signBase58(agent, listingStatement(addressOf(wallet), form));
      }
    } catch (e) {
      form.elements.key_signature.value = ""; // sent unsigned: the refusal explains
    }
    if (pasted) pasted.value = "";
    try {
      form.elements.creator_signature.value = await signBase58(wallet, listingStatement(addressOf(wallet), form));
    } catch (e) {
      form.elements.creator_signature.value = "";
    }
    form.submit(); // submit() fires no submit event: this runs once
  }));
  // The listing form as steps: details, endpoint and key, price and
  // collateral, review. Next checks the step's fields first; the review
  // lists what will be sent and the collateral it locks. Without this
  // script the form is one page, every step shown.
  document.querySelectorAll("form[data-wizard]").forEach((form) => {
    const steps = [...form.querySelectorAll("fieldset.step")];
    const list = document.querySelector("ol.wizard-steps");
    const items = list ? [...list.querySelectorAll("li")] : [];
    const tiersOut = document.getElementById("collateral-out");
    // collateral is what the price locks, and whether the balance is
    // short of it; null before a price.
    const collateral = () => {
      if (!tiersOut) return null;
      const metered = form.elements.pricing_model?.value === "metered";
      // A metered listing's collateral is its most's.
      const price = Number((metered ? form.elements.max_price_per_call_usdc : form.elements.price_per_call_usdc).value);
      if (!(price > 0)) return null;
      const tier = JSON.parse(tiersOut.dataset.tiers).find((t) => price <= t.MaxPrice);
      if (!tier) return null;
      return { metered, price, lock: tier.Collateral, short: tier.Collateral > Number(tiersOut.dataset.balance) };
    };
    const lock = () => {
      const c = collateral();
      if (!c) return "";
      return "At " + (c.metered ? "at most " : "") + c.price + " USDC a call, listing locks " + c.lock + " USDC of collateral" +
        (c.short ? ": your mainnet balance has " + tiersOut.dataset.balance + " USDC, so add funds first." : ", from your mainnet balance.");
    };
    if (tiersOut) ["price_per_call_usdc", "max_price_per_call_usdc", "pricing_model"].forEach((n) => form.elements[n]?.addEventListener("input", () => { tiersOut.textContent = lock(); }));
    // "List the agent" waits for what listing needs: a passing test of
    // the endpoint, key and pricing as they stand, the key file that signs
    // the listing, and the collateral. Each missing one is said beside it.
    const submit = form.querySelector("button[type=submit]");
    const gateOut = document.getElementById("list-gate");
    const testedNow = () => [form.elements.endpoint_url.value.trim(), form.elements.signing_public_key.value.trim(),
      form.elements.pricing_model?.value || "", form.elements.example_task?.value.trim() || "", form.elements.example_parameters?.value.trim() || ""].join("\n");
    let tested = "";
    const gate = () => {
      if (!submit || !gateOut) return;
      const why = [];
      if (tested !== testedNow()) why.push("Test the endpoint under 2. Endpoint and key, and see it pass: listing waits for a passing test of the endpoint, key, pricing and example as they are now.");
      const keyFile = form.querySelector("[data-agent-key]");
      if (keyFile && !keyFile.value.trim()) why.push("Paste the agent's key file under 2. Endpoint and key: it signs the listing.");
      const c = collateral();
      if (c && c.short) why.push("Add funds: listing locks " + c.lock + " USDC and your mainnet balance has " + tiersOut.dataset.balance + " USDC (your dashboard says how).");
      submit.disabled = why.length > 0;
      gateOut.hidden = why.length === 0;
      gateOut.replaceChildren(...why.map((w) => Object.assign(document.createElement("li"), { className: "fail", textContent: "✗ " + w })));
    };
    form.addEventListener("input", gate);
    form.addEventListener("change", gate);
    form.addEventListener("crtx:tested", (ev) => { tested = ev.detail.passed ? ev.detail.tested : ""; gate(); });
    gate();
    const meteredOnly = form.querySelector("[data-metered-only]");
    const showMetered = () => { if (meteredOnly) meteredOnly.hidden = form.elements.pricing_model?.value !== "metered"; };
    form.elements.pricing_model?.addEventListener("change", showMetered);
    showMetered();
    const review = () => {
      const dl = document.getElementById("review");
      if (!dl) return;
      dl.replaceChildren();
      steps.slice(0, -1).forEach((st) => st.querySelectorAll("label").forEach((l) => {
        const el = l.querySelector("input[name], textarea[name], select[name]");
        if (!el || l.closest("[data-metered-only][hidden]")) return;
        const dt = document.createElement("dt"); dt.textContent = l.firstChild.textContent.split(/[:(]/)[0].trim();
        const dd = document.createElement("dd"); dd.textContent = el.value || "—";
        dl.append(dt, dd);
      }));
      const dt = document.createElement("dt"); dt.textContent = "Collateral";
      const dd = document.createElement("dd"); dd.textContent = lock() || "—";
      dl.append(dt, dd);
    };
    const show = (i) => {
      steps.forEach((st, j) => { st.hidden = j !== i; });
      items.forEach((it, j) => { if (j === i) it.setAttribute("aria-current", "step"); else it.removeAttribute("aria-current"); });
      if (i === steps.length - 1) review();
      if (tiersOut) tiersOut.textContent = lock();
      gate();
    };
    steps.forEach((st, i) => {
      const bar = document.createElement("div");
      bar.className = "step-nav";
      if (i > 0) {
        const back = document.createElement("button");
        back.type = "button"; back.className = "secondary"; back.textContent = "Back";
        back.addEventListener("click", () => show(i - 1));
        bar.append(back);
      }
      if (i < steps.length - 1) {
        const next = document.createElement("button");
        next.type = "button"; next.className = "next"; next.textContent = "Next: " + steps[i + 1].querySelector("legend").textContent.replace(/^\d+\.\s*/, "");
        next.addEventListener("click", () => {
          const bad = [...st.querySelectorAll("input, textarea, select")].find((el) => !el.checkValidity());
          if (bad) { bad.reportValidity(); return; }
          show(i + 1);
          steps[i + 1].querySelector("input, textarea, button").focus();
        });
        bar.append(next);
      }
      st.append(bar);
    });
    items.forEach((it, j) => it.querySelector("a").addEventListener("click", (ev) => { ev.preventDefault(); show(j); }));
    if (list) list.hidden = false;
    // A refused form opens at the step of its first fault, under the
    // summary, which takes the focus; its links go to each field's step.
    const summary = document.getElementById("error-summary");
    const first = summary && summary.querySelector("a[data-step]");
    show(first ? Number(first.dataset.step) - 1 : 0);
    if (summary) {
      summary.querySelectorAll("a[data-step]").forEach((a) => a.addEventListener("click", (ev) => {
        ev.preventDefault();
        show(Number(a.dataset.step) - 1);
        const f = document.querySelector(a.getAttribute("href"));
        if (f) f.focus();
      }));
      // After the load, whose scroll to the address's fragment would
      // otherwise leave the focus on the page.
      window.addEventListener("load", () => setTimeout(() => summary.focus()));
    }
  });
  // The listing's parameters as rows (name, type, choices, required,
  // description) that write the input schema, with a preview of the
  // agent page's Try-it form they make. A schema the rows cannot hold is
  // left to its JSON box; the box stays the field that is sent.
  const builder = document.getElementById("param-builder");
  const schemaBox = document.getElementById("f-input_schema");
  if (builder && schemaBox) {
    const types = [["string", "text"], ["integer", "whole number"], ["number", "number"], ["boolean", "true or false"], ["choice", "one of"]];
    const rowsTable = document.getElementById("param-rows");
    const preview = document.getElementById("param-preview");
    const el = (tag, props) => Object.assign(document.createElement(tag), props || {});
    const rows = () => [...rowsTable.querySelectorAll("tr.param")];
    const write = () => {
      const props = {}; const required = [];
      rows().forEach((tr) => {
        const name = tr.querySelector(".p-name").value.trim();
        if (!name) return;
        const type = tr.querySelector(".p-type").value;
        const p = {};
        if (type === "choice") { p.type = "string"; p.enum = tr.querySelector(".p-choices").value.split(",").map((c) => c.trim()).filter(Boolean); }
        else p.type = type;
        const desc = tr.querySelector(".p-desc").value.trim();
        if (desc) p.description = desc;
        props[name] = p;
        if (tr.querySelector(".p-req").checked) required.push(name);
      });
      const schema = { type: "object", properties: props, additionalProperties: false };
      if (required.length) schema.required = required;
      schemaBox.value = JSON.stringify(schema, null, 2);
      show();
    };
    const show = () => {
      preview.replaceChildren(el("label", { textContent: "Task" }), el("textarea", { disabled: true, placeholder: "what the caller asks" }));
      rows().forEach((tr) => {
        const name = tr.querySelector(".p-name").value.trim();
        if (!name) return;
        const type = tr.querySelector(".p-type").value;
        const label = el("label", { textContent: name + (tr.querySelector(".p-req").checked ? " (required)" : "") + " " });
        const desc = tr.querySelector(".p-desc").value.trim();
        if (desc) label.append(el("span", { className: "muted", textContent: desc }));
        let input;
        if (type === "choice" || type === "boolean") {
          input = el("select", { disabled: true });
          const choices = type === "boolean" ? ["true", "false"] : tr.querySelector(".p-choices").value.split(",").map((c) => c.trim()).filter(Boolean);
          choices.forEach((c) => input.append(el("option", { textContent: c })));
        } else input = el("input", { disabled: true, placeholder: types.find((t) => t[0] === type)[1] });
        label.append(input);
        preview.append(label);
      });
    };
    const add = (name, type, choices, req, desc) => {
      const tr = el("tr", { className: "param" });
      const td = (child, label) => { const c = el("td"); c.dataset.label = label; c.append(child); tr.append(c); return child; };
      td(el("input", { className: "p-name", value: name || "", placeholder: "lang" }), "name").setAttribute("aria-label", "Parameter name");
      const sel = td(el("select", { className: "p-type" }), "type");
      sel.setAttribute("aria-label", "Parameter type");
      types.forEach(([v, l]) => sel.append(el("option", { value: v, textContent: l, selected: v === type })));
      td(el("input", { className: "p-choices", value: choices || "", placeholder: "en, fr" }), "choices").setAttribute("aria-label", "Choices, comma-separated");
      td(el("input", { className: "p-req", type: "checkbox", checked: !!req }), "required").setAttribute("aria-label", "Required");
      td(el("input", { className: "p-desc", value: desc || "" }), "description").setAttribute("aria-label", "Description");
      const del = td(el("button", { type: "button", className: "secondary", textContent: "Remove" }), "actions");
      del.addEventListener("click", () => { tr.remove(); write(); });
      tr.addEventListener("input", write);
      tr.addEventListener("change", write);
      rowsTable.append(tr);
      return tr;
    };
    // The schema in the box, as rows when each property is a plain type or
    // a list of text choices; anything else stays JSON only.
    let schema;
    try { schema = JSON.parse(schemaBox.value || "{}"); } catch (e) { schema = null; }
    const plain = schema && schema.type === "object" && Object.entries(schema.properties || {}).every(([, p]) =>
      p && (["string", "integer", "number", "boolean"].includes(p.type)) && (!p.enum || p.type === "string") && Object.keys(p).every((k) => ["type", "enum", "description"].includes(k)));
    if (plain) {
      Object.entries(schema.properties || {}).forEach(([name, p]) => add(name, p.enum ? "choice" : p.type, (p.enum || []).join(", "), (schema.required || []).includes(name), p.description));
      builder.hidden = false;
      document.getElementById("param-add").addEventListener("click", () => { add().querySelector(".p-name").focus(); });
      show();
    }
  }
  // An endpoint tested from the listing form, as the Key & test tool does:
  // its report, read from the page the tool answers with, under the button.
  const wtest = document.getElementById("wizard-test");
  const wform = document.getElementById("wizard-test-form");
  if (wtest && wform) {
    wtest.hidden = false;
    wtest.addEventListener("click", async () => {
      const lf = wtest.form;
      const out = document.getElementById("wizard-report");
      const body = new URLSearchParams(new FormData(wform));
      body.set("endpoint_url", lf.elements.endpoint_url.value.trim());
      body.set("signing_public_key", lf.elements.signing_public_key.value.trim());
      if (lf.elements.pricing_model) body.set("pricing_model", lf.elements.pricing_model.value);
      // The listing's example is what the test sends, when it has one.
      ["example_task", "example_parameters"].forEach((n) => { if (lf.elements[n]) body.set(n, lf.elements[n].value.trim()); });
      out.textContent = "Sending a test request…";
      const sent = [body.get("endpoint_url"), body.get("signing_public_key"), lf.elements.pricing_model?.value || "",
        body.get("example_task") || "", body.get("example_parameters") || ""].join("\n");
      try {
        const r = await fetch(wform.action, { method: "POST", body, redirect: "follow" });
        const doc = new DOMParser().parseFromString(await r.text(), "text/html");
        const rep = doc.getElementById("report");
        out.replaceChildren(rep ? document.importNode(rep, true) : document.createTextNode("The test could not be run: " + r.status));
        lf.dispatchEvent(new CustomEvent("crtx:tested", { detail: { passed: rep?.dataset.passed === "true", tested: sent } }));
        // The tool's form on that page carries the next one-time token.
        const next = doc.querySelector('form[action="/dashboard/creator/test"] input[name=csrf]');
        if (next) wform.elements.csrf.value = next.value;
      } catch (e) {
        out.textContent = "The test could not be sent: " + e.message;
      }
    });
  }
  // /docs: a search that keeps the operations whose method, path,
  // summary or id holds every word typed (their long descriptions would
  // match nearly anything), with the side navigation's entries, and says
  // how many.
  const docsSearch = document.getElementById("docs-search");
  if (docsSearch) {
    docsSearch.form.hidden = false;
    docsSearch.form.addEventListener("submit", (ev) => ev.preventDefault());
    const ops = [...document.querySelectorAll("section.op")];
    const keys = new Map(ops.map((op) => [op, [op.querySelector("h3")?.textContent, op.querySelector("h3 + p")?.textContent, op.id].join(" ").toLowerCase()]));
    const found = document.getElementById("docs-found");
    docsSearch.addEventListener("input", () => {
      const words = docsSearch.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      ops.forEach((op) => {
        const hit = words.every((w) => keys.get(op).includes(w));
        op.hidden = !hit;
        if (hit) shown++;
        const entry = document.querySelector('.docs-side a[href="#' + CSS.escape(op.id) + '"]');
        if (entry) entry.parentElement.hidden = !hit;
      });
      document.querySelectorAll('section[id^="tag-"]').forEach((g) => { g.hidden = !g.querySelector("section.op:not([hidden])"); });
      found.textContent = words.length ? shown + " of " + ops.length + " operations" : "";
    });
  }
  const keygen = document.getElementById("keygen");
  if (keygen) keygen.addEventListener("click", async () => {
    const jwk = await newKey();
    const pub = document.getElementById("keygen-public");
    if (pub) pub.textContent = addressOf(jwk);
    document.getElementById("keygen-file").textContent = solanaFromJwk(jwk);
    document.getElementById("keygen-out").hidden = false;
    const pk = document.querySelector("input[name=signing_public_key]");
    if (pk && !pk.value) pk.value = addressOf(jwk);
    const pasted = document.querySelector("form:not([data-agent-id]) [data-agent-key]");
    if (pasted && !pasted.value) pasted.value = solanaFromJwk(jwk); // to sign the listing with
    const dl = document.getElementById("keygen-download");
    if (dl) dl.href = URL.createObjectURL(new Blob([solanaFromJwk(jwk)], { type: "application/json" }));

  });
  const verify = document.getElementById("verify");
  if (verify) verify.addEventListener("click", async () => {
    const out = document.getElementById("verify-out");
    try {
      const bytes = new Uint8Array(await (await fetch(verify.dataset.url)).arrayBuffer());
      const hex = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
      const ok = "sha256:" + hex === verify.dataset.hash;
      out.textContent = ok ? "Verified: the published result hashes to the committed result_hash." : "Mismatch: sha256:" + hex;
      out.className = ok ? "ok" : "error";
    } catch (e) { out.textContent = e.message; out.className = "error"; }
  });
});
