// crtx: "Pay with <wallet>" on a deposit's page. The browser wallet the
// person signed in with (or the first that can send transactions) is asked
// for its account; the marketplace's Solana Pay transaction request builds
// the transfer for that account, and the wallet signs and sends it. The
// page's status then turns credited by itself (funds.js) once Solana
// finalizes the transfer. Without a wallet the button stays hidden and the
// QR code and the solana: link remain.
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("pay-with-wallet");
  const said = document.getElementById("pay-status");
  if (!button || !said || !window.crtxWallet) return;
  const say = (text) => { said.removeAttribute("role"); said.textContent = text; };
  const canSend = (w) => w && w.features["solana:signAndSendTransaction"];
  const pick = () => [crtxWallet.remembered(), ...crtxWallet.wallets()].find(canSend);
  const paid = () => document.querySelector("#deposit-status [data-final]") !== null;
  const show = () => {
    const w = pick();
    button.hidden = !w || paid();
    // Once credited, the status names the transaction: said once.
    if (paid()) say("");
    if (w) button.querySelector("[data-wallet-name]").textContent = w.name;
  };
  crtxWallet.onChange(show);
  new MutationObserver(show).observe(document.getElementById("deposit-status"), { childList: true, subtree: true });
  show();

  async function transaction(account) {
    const r = await fetch(button.dataset.link, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ account: account.address }) });
    let j = {};
    try { j = await r.json(); } catch { /* the status says it */ }
    if (!r.ok) throw new Error("The marketplace could not prepare the transfer: " + (j.error ? j.error.message : r.status + " " + r.statusText));
    return Uint8Array.from(atob(j.transaction), (c) => c.charCodeAt(0));
  }

  button.addEventListener("click", async () => {
    const w = pick();
    if (!w) return;
    button.disabled = true;
    try {
      say("Connecting to " + w.name + "…");
      const [account] = await crtxWallet.connect(w);
      say("Preparing the transfer for " + account.address + "…");
      const tx = await transaction(account);
      say("Approve the transfer in " + w.name + ".");
      const sig = await crtxWallet.signAndSendTransaction(w, account, tx, button.dataset.chain);
      say("Sent as Solana transaction " + sig + ". This page shows it credited once Solana finalizes it, in a few seconds.");
    } catch (e) {
      // The wallet may have sent the transfer before it failed to answer:
      // a second one would pay twice.
      say(e.message + " If " + w.name + " shows the transfer as sent, wait for this page to turn credited rather than paying again.");
      said.setAttribute("role", "alert");
      button.disabled = false;
    }
  });
});
