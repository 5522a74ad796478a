/**
 * The status page's static parts, as strings so `bun build --compile` embeds them: the HTML shell
 * (no data, no token, no inline script: the content security policy allows only this server's
 * script and style), the page shown to a visitor who is not logged in, and the style sheet. Their
 * fixed words come from the message catalog (src/core/messages/page.ts) in the root's language.
 */
import { type Lang, type MessageId, say } from "../../core/messages/catalog.ts";

const HEAD = `<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/page/app.css">`;

/** The page's shell, its fixed words in `lang` (the server's root's `.longrun/settings.json` `lang`). */
export function pageHtml(lang: Lang = "en"): string {
  const t = (id: MessageId) => say(id, lang);
  return `<!doctype html>
<html lang="${lang}">
<head>
${HEAD}
<title>${t("page.title")}</title>
<script src="/page/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">${t("page.skip")}</a>
<header class="bar">
  <p class="brand"><strong>longrun</strong> <span id="who" class="who">${t("page.connecting")}</span></p>
  <form class="pickers" id="pickers">
    <label class="pick"><span>${t("page.root")}</span> <select id="pick-root"></select></label>
    <label class="pick"><span>${t("page.task")}</span> <select id="pick-task"></select></label>
  </form>
  <p id="live" class="live" role="status">${t("page.connecting")}</p>
  <button type="button" id="logout" class="secondary logout">${t("page.logout")}</button>
</header>
<main id="main" tabindex="-1">
  <div id="notice" class="notice" role="alert" hidden></div>
  <section id="lease" class="lease" aria-labelledby="lease-title">
    <h2 id="lease-title" class="sr-only">${t("page.lease")}</h2>
    <div id="lease-view" aria-live="polite"></div>
    <div id="host-controls"></div>
  </section>
  <div class="grid">
    <div class="col">
      <section aria-labelledby="task-h"><h2 id="task-h">${t("page.task")}</h2><div id="task-view"></div></section>
      <section aria-labelledby="runs-h"><h2 id="runs-h">${t("page.runs")}</h2><div id="runs-view"></div></section>
      <section aria-labelledby="approvals-h"><h2 id="approvals-h">${t("page.approvals")}</h2><div id="approvals-view"></div></section>
    </div>
    <div class="col">
      <section aria-labelledby="turns-h"><h2 id="turns-h">${t("page.turns")}</h2><div id="turns-view"></div></section>
      <section aria-labelledby="artifacts-h"><h2 id="artifacts-h">${t("page.artifacts")}</h2><div id="artifacts-view"></div></section>
      <section aria-labelledby="adjust-h"><h2 id="adjust-h">${t("page.adjustments")}</h2><div id="adjustments-view"></div></section>
      <section aria-labelledby="memory-h">
        <h2 id="memory-h">${t("page.memory")}</h2>
        <form id="search" role="search">
          <label for="q">${t("page.search_label")}</label>
          <div class="row"><input id="q" name="q" type="search" autocomplete="off" maxlength="500" required><button type="submit">${t("page.search")}</button></div>
        </form>
        <div id="search-view" aria-live="polite"></div>
      </section>
    </div>
  </div>
</main>
</body>
</html>
`;
}

/** The page a visitor who is not logged in gets, in `lang`. */
export function loginHtml(lang: Lang = "en"): string {
  const t = (id: MessageId, params = {}) => say(id, lang, params);
  return `<!doctype html>
<html lang="${lang}">
<head>
${HEAD}
<title>${t("page.login_title")}</title>
</head>
<body>
<main id="main" class="login">
  <h1>${t("page.title")}</h1>
  <p>${t("page.login_needs", { open: "<code>longrun open</code>", http: "<code>longrun http --login-link</code>" })}</p>
  <p>${t("page.login_another")}</p>
  <pre>curl -X POST -H "Authorization: Bearer $TOKEN" http://HOST:PORT/page/link</pre>
  <p>${t("page.login_tokens", { file: "<code>.longrun/http.json</code>" })}</p>
</main>
</body>
</html>
`;
}

export const PAGE_CSS = `
:root{--bg:#f5f6f8;--card:#fff;--ink:#1b1f24;--muted:#555f6b;--line:#d0d7de;--blue:#0a4fb8;--blue-bg:#e3edfb;
--green:#0f5e26;--green-bg:#dcf5e3;--red:#9f1022;--red-bg:#ffe9e7;--amber:#6b4400;--amber-bg:#fff3c4;--grey-bg:#eceff3;
--purple:#5a2aa8;--purple-bg:#efe6fd;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
*{box-sizing:border-box}
body{margin:0;line-height:1.45;font-size:15px}
h1,h2,h3{line-height:1.2;margin:0 0 .5rem}
h2{font-size:1.05rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
h3{font-size:1rem}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--grey-bg);padding:.5rem;border-radius:6px}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.skip{position:absolute;left:-999px;top:0;background:var(--ink);color:#fff;padding:.5rem 1rem;z-index:10}
.skip:focus{left:0}
:focus-visible{outline:3px solid var(--blue);outline-offset:2px}
.bar{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;background:#1b1f24;color:#fff}
.brand{margin:0;font-size:1.1rem}
.who{display:inline-block;margin-left:.4rem;padding:.05rem .5rem;border-radius:999px;background:#3a4350;font-size:.85rem}
.who.host{background:#ffd65c;color:#1b1f24}
.pickers{display:flex;flex-wrap:wrap;align-items:center;gap:.35rem .5rem;flex:1 1 20rem;min-width:0}
.pick{margin:0;display:flex;align-items:center;gap:.4rem;flex:1 1 16rem;min-width:0;font-size:.85rem;color:#d6dbe1}
.pick select{flex:1;min-width:0;max-width:100%;font:inherit;font-size:.9rem;padding:.25rem;border-radius:6px;border:1px solid #8c959f}
.sub{margin:.75rem 0 .25rem;font-size:.85rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.live{margin:0;font-size:.85rem;color:#d6dbe1}
.live.on::before{content:"";display:inline-block;width:.6rem;height:.6rem;border-radius:50%;background:#3ccf6a;margin-right:.4rem}
.live.off::before{content:"";display:inline-block;width:.6rem;height:.6rem;border-radius:50%;background:#ff8c82;margin-right:.4rem}
main{max-width:1280px;margin:0 auto;padding:1rem}
main:focus{outline:none}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;margin-bottom:1rem;min-width:0}
.grid{display:grid;grid-template-columns:minmax(0,1.15fr) minmax(0,1fr);gap:1rem}
@media (max-width:860px){.grid{grid-template-columns:minmax(0,1fr)}}
.notice{background:var(--red-bg);color:var(--red);border:1px solid var(--red);border-radius:8px;padding:.6rem .8rem;margin-bottom:1rem}
.notice.ok{background:var(--green-bg);color:var(--green);border-color:var(--green)}
.lease{border-width:2px;display:grid;grid-template-columns:minmax(0,1fr) auto;gap:1rem;align-items:start}
@media (max-width:860px){.lease{grid-template-columns:minmax(0,1fr)}}
.lease.ro{background:#e6edf6;border-color:#44617f}
.lease.rw{background:#ffe38f;border-color:#b36b00}
.lease.none{background:var(--grey-bg)}
.mode{font-size:clamp(2rem,6vw,3.4rem);font-weight:800;letter-spacing:.02em;margin:0;line-height:1.05}
.lease.ro .mode{color:#16324f}
.lease.rw .mode{color:#3b2600}
.lease-line{font-size:1.15rem;margin:.35rem 0 .5rem;font-weight:600}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem .8rem;margin:.25rem 0 0}
dl.facts dt{color:var(--muted);font-weight:600}
.lease.rw dl.facts dt,.lease.ro dl.facts dt{color:inherit}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.asked{margin:.6rem 0 0;padding:.5rem .7rem;border-radius:8px;background:#fff;border:1px dashed #6b4400}
.host-box{background:rgba(255,255,255,.85);border:1px solid var(--line);border-radius:10px;padding:.75rem;min-width:min(22rem,100%)}
.host-box h3{margin-bottom:.4rem}
form label{display:block;font-weight:600;font-size:.9rem;margin:.35rem 0 .15rem}
input[type=text],input[type=search]{font:inherit;width:100%;padding:.4rem .5rem;border:1px solid #8c959f;border-radius:6px;background:#fff;color:var(--ink)}
button{font:inherit;font-weight:600;padding:.45rem .9rem;border-radius:6px;border:1px solid #1b1f24;background:#1b1f24;color:#fff;cursor:pointer;margin-top:.5rem}
button.secondary{background:#fff;color:var(--ink)}
button.danger{background:var(--red);border-color:var(--red)}
button:disabled{opacity:.6;cursor:default}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.5rem}
.buttons button{margin:0}
.bar .logout{margin:0 0 0 auto;padding:.3rem .7rem}
p.host-box{margin:0;max-width:22rem}
.act-status{margin:.5rem 0 0;padding:0 .4rem;border-radius:4px;font-size:.9rem}
.act-status:empty{display:none}
.row{display:flex;gap:.5rem;align-items:flex-end}
.row input{flex:1}
.row button{margin-top:0}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:700;background:var(--grey-bg);color:var(--ink);white-space:nowrap}
.st-in_progress,.st-running{background:var(--blue-bg);color:var(--blue)}
.st-completed,.st-finished,.k-completed,.ok{background:var(--green-bg);color:var(--green)}
.st-failed,.st-cancelled,.k-failed,.bad{background:var(--red-bg);color:var(--red)}
.st-blocked{background:var(--red-bg);color:var(--red)}
.st-paused,.st-parked,.st-pending{background:var(--grey-bg);color:#3d4650}
.st-waiting_verification{background:var(--purple-bg);color:var(--purple)}
.k-unknown,.warn{background:var(--amber-bg);color:var(--amber)}
.k-begun{background:var(--grey-bg);color:#3d4650}
.e-granted{background:#ffe38f;color:#3b2600}
.e-revoked{background:#e6edf6;color:#16324f}
.e-ended{background:#eceff3;color:#333}
body.logged-out #main>:not(#notice),body.logged-out .pickers,body.logged-out #logout{display:none}
.e-requested{background:var(--purple-bg);color:var(--purple)}
.e-status{background:var(--grey-bg);color:#3d4650}
.desc{white-space:pre-wrap;overflow-wrap:anywhere;font-size:1.05rem;margin:.25rem 0 .75rem;max-height:12rem;overflow:auto}
.muted{color:var(--muted)}
.empty{color:var(--muted);font-style:italic;margin:0}
.card{border:1px solid var(--line);border-radius:8px;padding:.75rem;margin:.75rem 0 0}
.card:first-child{margin-top:0}
.card-head{display:flex;flex-wrap:wrap;gap:.35rem .6rem;align-items:center;margin-bottom:.4rem}
.card-head h3{margin:0}
ul.plain{list-style:none;margin:0;padding:0}
ul.plain>li{padding:.35rem 0;border-top:1px solid #eaeef2;overflow-wrap:anywhere}
ul.plain>li:first-child{border-top:0}
.groups{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:.5rem;margin-top:.5rem}
@media (max-width:520px){.groups{grid-template-columns:minmax(0,1fr)}}
.group{border-radius:8px;padding:.5rem;min-width:0}
.group h4{margin:0 0 .3rem;font-size:.9rem}
.group.k-completed{border:1px solid #8fd19e}
.group.k-failed{border:1px solid #f5a3a3}
.group.k-unknown{border:1px solid #e0b94a}
.group ul{list-style:none;margin:0;padding:0;font-size:.85rem}
.group li{padding:.15rem 0;overflow-wrap:anywhere}
.budget{margin:.5rem 0 0}
.dim{display:grid;grid-template-columns:7.5rem minmax(0,1fr);gap:.15rem .6rem;align-items:center;margin:.3rem 0}
@media (max-width:520px){.dim{grid-template-columns:minmax(0,1fr)}}
.dim-label{font-size:.85rem;font-weight:600}
.track{position:relative;height:1.05rem;border-radius:4px;background:#e3e7ec;overflow:hidden;border:1px solid #c3cad3}
.fill{position:absolute;left:0;top:0;bottom:0;background:var(--blue)}
.fill.full{background:var(--red)}
.fill.unk{left:auto;right:0;background:repeating-linear-gradient(45deg,#9a6700 0 5px,#fff3c4 5px 10px)}
.dim-text{grid-column:2;font-size:.85rem}
@media (max-width:520px){.dim-text{grid-column:1}}
.stages{display:flex;flex-wrap:wrap;gap:.35rem;margin-top:.35rem}
.stage{font-size:.8rem;padding:.1rem .5rem;border-radius:999px;border:1px solid var(--line)}
.stage.done{background:var(--green-bg);color:var(--green);border-color:#8fd19e}
.stage.todo{background:#fff;color:var(--muted);border-style:dashed}
blockquote{margin:0;padding:.2rem .7rem;border-left:4px solid #8c959f;white-space:pre-wrap;overflow-wrap:anywhere}
.login{max-width:40rem}
.login section,.login p{font-size:1rem}
`;
