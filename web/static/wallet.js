// crtx and browser wallets (Phantom, Solflare, Backpack…) through the
// Wallet Standard, with no library: the app's half of the handshake of
// @wallet-standard/app, the wallet sign-in, and the calls the dashboards
// make of a wallet. It defines window.crtxWallet.
(() => {
  const registered = new Set();
  const listeners = new Set();
  const changed = () => listeners.forEach((f) => { try { f(); } catch (e) { console.error(e); } });
  // The API a wallet registers itself with. A wallet that loads later
  // announces itself with wallet-standard:register-wallet and a callback;
  // one loaded before waits for wallet-standard:app-ready and calls back.
  function register(...wallets) {
    const added = wallets.filter((w) => w && !registered.has(w));
    added.forEach((w) => registered.add(w));
    if (added.length) changed();
    return () => { if (added.some((w) => registered.delete(w))) changed(); };
  }
  const api = Object.freeze({ register });
  window.addEventListener("wallet-standard:register-wallet", (ev) => {
    try { ev.detail(api); } catch (e) { console.error("a wallet failed to register", e); }
  });
  class AppReadyEvent extends Event {
    #detail;
    constructor() { super("wallet-standard:app-ready", { bubbles: false, cancelable: false, composed: false }); this.#detail = api; }
    get detail() { return this.#detail; }
  }
  window.dispatchEvent(new AppReadyEvent());

  // b58encode is app.js's, which every page loads after this script; it
  // is only called once the page is in use.

  // Only wallets that can connect and sign a message can sign in; the
  // others (a wallet of another chain only) are not listed.
  const usable = (w) => w.features && w.features["standard:connect"] &&
    (w.features["solana:signIn"] || w.features["solana:signMessage"]);
  const REMEMBER = "crtx-wallet-name";
  const remembered = () => { try { return localStorage.getItem(REMEMBER); } catch { return null; } };
  // A wallet's icon is a data: URL by the standard; anything else would
  // be fetched from elsewhere, so it is not shown.
  const icon = (w) => (typeof w.icon === "string" && /^data:image\/(svg\+xml|webp|png|gif);base64,/.test(w.icon) ? w.icon : "");

  // A wallet's refusal, said for people. Wallets differ in how they say
  // no: EIP-1193's code 4001 (Phantom, Solflare), or words.
  function explain(wallet, e) {
    const msg = (e && e.message) || String(e);
    if ((e && e.code === 4001) || /reject|denied|declin|cancel/i.test(msg)) return new Error("You declined in " + wallet.name + ": nothing was signed. Choose a wallet to try again.");
    if (/network|cluster|chain/i.test(msg)) return new Error(wallet.name + " refused: " + msg + ". Check which network it is set to.");
    return new Error(wallet.name + " could not do it: " + msg);
  }
  async function call(wallet, f) {
    try { return await f(); } catch (e) { throw explain(wallet, e); }
  }

  async function connect(wallet) {
    const { accounts } = await call(wallet, () => wallet.features["standard:connect"].connect());
    if (!accounts || !accounts.length) throw new Error(wallet.name + " shared no account: unlock it, choose an account and try again.");
    try { localStorage.setItem(REMEMBER, wallet.name); } catch { /* private mode: not remembered */ }
    return accounts;
  }

  // The challenge is a Sign-In-With-Solana message; solana:signIn takes
  // its fields, and the wallet writes the message again from them.
  const FIELDS = { "URI": "uri", "Version": "version", "Chain ID": "chainId", "Nonce": "nonce", "Issued At": "issuedAt", "Expiration Time": "expirationTime" };
  function signInInput(text) {
    const lines = text.split("\n");
    const domain = lines[0].replace(/ wants you to sign in with your Solana account:$/, "");
    const input = { domain, address: lines[1], statement: lines[3] };
    for (const line of lines.slice(5)) {
      const i = line.indexOf(": ");
      if (FIELDS[line.slice(0, i)]) input[FIELDS[line.slice(0, i)]] = line.slice(i + 2);
    }
    return input;
  }
  // What differs between the challenge and what a wallet signed, field by
  // field, to say which one the wallet changed.
  function difference(challenge, signed) {
    const a = signInInput(challenge), b = signInInput(signed);
    const names = { domain: "site", address: "account", statement: "statement", ...Object.fromEntries(Object.entries(FIELDS).map(([k, v]) => [v, k])) };
    for (const k of Object.keys(names)) if (a[k] !== b[k]) return "its " + names[k] + " is " + JSON.stringify(b[k] || "") + " where the marketplace's is " + JSON.stringify(a[k] || "");
    return "";
  }

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    let j = {};
    try { j = await r.json(); } catch { /* the status says it */ }
    if (!r.ok) throw new Error(j.error ? j.error.message : r.status + " " + r.statusText);
    return j;
  }

  // signIn connects wallet, asks the marketplace for a challenge for its
  // first account, has the wallet sign it (solana:signIn, else
  // solana:signMessage of the text) and returns the session it opens.
  // progress(text) is told each step.
  async function signIn(wallet, progress = () => {}) {
    progress("Connecting to " + wallet.name + "…");
    const [account] = await connect(wallet);
    const address = account.address;
    const ch = await post("/v1/auth/challenge", { wallet: address });
    progress("Sign the sign-in message in " + wallet.name + ". It costs nothing and sends nothing on chain.");
    let out;
    if (wallet.features["solana:signIn"]) {
      [out] = await call(wallet, () => wallet.features["solana:signIn"].signIn(signInInput(ch.message)));
    } else {
      const message = new TextEncoder().encode(ch.message);
      [out] = await call(wallet, () => wallet.features["solana:signMessage"].signMessage({ account, message }));
    }
    if (!out || !out.signature) throw new Error(wallet.name + " returned no signature.");
    let signed;
    try { signed = new TextDecoder("utf-8", { fatal: true }).decode(out.signedMessage); } catch { throw new Error(wallet.name + " signed something that is not text, not the sign-in message."); }
    const by = out.account && out.account.address ? out.account.address : address;
    const changedBy = signed === ch.message ? "" : difference(ch.message, signed);
    try {
      progress("Opening a session for " + by + "…");
      return await post("/v1/auth/session", { wallet: by, message: signed, signature: b58encode(out.signature) });
    } catch (e) {
      if (!changedBy) throw new Error("The marketplace refused the signature: " + e.message);
      throw new Error(wallet.name + " signed another message than the marketplace's: " + changedBy + ". The marketplace refused it (" + e.message + "), so no session was opened. Try again; if it happens again, sign in another way below.");
    }
  }

  // signAndSendTransaction has wallet sign the serialized transaction tx
  // (Uint8Array) with account and send it to chain ("solana:devnet",
  // "solana:mainnet"); it returns the transaction's signature, base58.
  async function signAndSendTransaction(wallet, account, tx, chain) {
    const f = wallet.features["solana:signAndSendTransaction"];
    if (!f) throw new Error(wallet.name + " cannot send transactions; use another wallet.");
    const on = (account.chains && account.chains.length ? account.chains : wallet.chains) || [];
    if (!on.includes(chain)) throw new Error(wallet.name + " is not set to " + chain.replace("solana:", "Solana ") + " for this account (it offers " + (on.join(", ") || "no network") + "); switch its network and try again.");
    const [out] = await call(wallet, () => f.signAndSendTransaction({ account, chain, transaction: tx }));
    return b58encode(out.signature);
  }

  window.crtxWallet = Object.freeze({
    // wallets lists the registered wallets that can sign in, the one used
    // last first.
    wallets: () => [...registered].filter(usable).sort((a, b) => (b.name === remembered()) - (a.name === remembered())),
    // onChange(f) calls f whenever a wallet registers or goes; it returns
    // the function that stops it.
    onChange: (f) => { listeners.add(f); return () => listeners.delete(f); },
    remembered: () => [...registered].filter(usable).find((w) => w.name === remembered()) || null,
    icon, connect, signIn, signAndSendTransaction,
  });
})();
