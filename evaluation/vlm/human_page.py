"""The page of ``bspatial human``: one HTML file, its script inline, served by :mod:`.human_server`.

It carries no item: the script asks ``GET /api/item`` for the item to show (what :meth:`~.human.HumanSession.view`
returns), loads its frames from ``GET /api/frame?id=..&k=..`` and posts the answer to ``POST /api/answer``
(``{"id", "letter"}`` for a VQA item, ``{"id", "x", "y"}`` in the image's pixels for an IR item), whose reply is
the next item. Keys A-D (or 1-4) press the option buttons. The IR image is drawn 512 CSS pixels wide
(:data:`IR_DISPLAY_WIDTH`), its height kept in proportion, and a click is mapped back to the image's own pixels
from the drawn size, so any zoom or size gives the same point.
"""

from __future__ import annotations

IR_DISPLAY_WIDTH = 512
"""CSS pixels the IR frame is drawn at (a 224 px head frame at ~2.3x: big enough to point at a handle)."""
VQA_FRAME_WIDTH = 320
"""CSS pixels each VQA frame is drawn at (five navigation frames fit two rows of a laptop screen)."""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>BEHAVIOR-Spatial: human baseline</title>
<link rel="icon" href="data:,">
<style>
  body { font-family: system-ui, sans-serif; margin: 1.5rem; max-width: 1400px; color: #222; }
  header { display: flex; gap: 2rem; align-items: baseline; border-bottom: 1px solid #ccc; padding-bottom: .5rem; }
  #timer { font-variant-numeric: tabular-nums; font-weight: bold; }
  #frames { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
  figure { margin: 0; }
  figcaption { font-size: .85rem; color: #555; }
  img.frame { width: __VQA_WIDTH__px; height: auto; image-rendering: pixelated; }
  img.point { cursor: crosshair; image-rendering: pixelated; }
  #context p { white-space: pre-wrap; color: #444; font-size: .9rem; margin: .4rem 0; }
  #question { font-size: 1.2rem; font-weight: 600; }
  #options button { font-size: 1.05rem; margin: .25rem .5rem .25rem 0; padding: .5rem 1rem; }
  #message { color: #a00; min-height: 1.2em; }
  .id { color: #888; font-size: .8rem; }
</style>
</head>
<body>
<header>
  <strong>Human baseline</strong>
  <span id="who"></span>
  <span id="progress"></span>
  <span>time on this item: <span id="timer">0 s</span></span>
</header>
<main id="item" data-item-id="" data-kind="">
  <div id="frames"></div>
  <div id="context"></div>
  <p id="question"></p>
  <p id="target"></p>
  <div id="options"></div>
  <p class="id">item <span id="item-id"></span></p>
</main>
<section id="done" hidden><h2>All items are answered. Thank you!</h2><p>You can close this page and stop the
server (Ctrl-C).</p></section>
<p id="message" role="status"></p>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let current = null, started = performance.now(), busy = false;

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function render(view) {
  current = view;
  $("who").textContent = "annotator: " + view.annotator;
  $("progress").textContent = view.progress.answered + " / " + view.progress.total + " answered";
  if (view.done) {
    $("item").hidden = true; $("done").hidden = false; $("item").dataset.itemId = ""; return;
  }
  started = performance.now() - 1000 * view.elapsed_s;
  const item = $("item");
  item.dataset.itemId = view.id; item.dataset.kind = view.kind; $("item-id").textContent = view.id;
  clear($("frames")); clear($("context")); clear($("options"));
  for (let k = 0; k < view.frames; k++) {
    const figure = document.createElement("figure"), img = document.createElement("img");
    img.src = "/api/frame?id=" + encodeURIComponent(view.id) + "&k=" + k;
    img.alt = "frame " + (k + 1);
    figure.appendChild(img);
    if (view.kind === "point") {
      const [w, h] = view.image_size;
      img.className = "point"; img.id = "point-image";
      img.style.width = "__IR_WIDTH__px"; img.style.height = (__IR_WIDTH__ * h / w) + "px";
      img.addEventListener("click", (event) => {
        const box = img.getBoundingClientRect();
        send({id: view.id, x: (event.clientX - box.left) * w / box.width, y: (event.clientY - box.top) * h / box.height});
      });
    } else {
      img.className = "frame";
      if (view.frames > 1) {
        const caption = document.createElement("figcaption");
        caption.textContent = "frame " + (k + 1) + (k === view.frames - 1 ? " (current view)" : "");
        figure.appendChild(caption);
      }
    }
    $("frames").appendChild(figure);
  }
  for (const text of view.context) {
    const p = document.createElement("p"); p.textContent = text; $("context").appendChild(p);
  }
  $("question").textContent = view.kind === "point" ? "The robot's task is: " + view.question : view.question;
  $("target").textContent = view.target || "";
  for (const option of view.options || []) {
    const button = document.createElement("button");
    button.type = "button"; button.dataset.letter = option.letter;
    button.textContent = option.letter + ". " + option.text;
    button.addEventListener("click", () => send({id: view.id, letter: option.letter}));
    $("options").appendChild(button);
  }
  tick();
}

async function send(answer) {
  if (busy) return;
  busy = true;
  try {
    const reply = await fetch("/api/answer", {method: "POST", headers: {"Content-Type": "application/json"},
                                              body: JSON.stringify(answer)});
    const body = await reply.json();
    if (reply.ok) { $("message").textContent = ""; render(body); }
    else if (reply.status === 409) { $("message").textContent = body.error; render(body.current); }
    else { $("message").textContent = "not recorded: " + body.error; }
  } catch (error) {
    $("message").textContent = "not recorded: the server does not answer (" + error + "); restart it and reload";
  } finally { busy = false; }
}

async function load() {
  try { render(await (await fetch("/api/item", {cache: "no-store"})).json()); }
  catch (error) { $("message").textContent = "the server does not answer (" + error + ")"; }
}

function tick() { $("timer").textContent = Math.floor((performance.now() - started) / 1000) + " s"; }
setInterval(tick, 250);

document.addEventListener("keydown", (event) => {
  if (!current || current.done || current.kind !== "choice" || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toUpperCase(), letters = ["A", "B", "C", "D"];
  const letter = letters.includes(key) ? key : letters["1234".indexOf(key)];
  if (letter) send({id: current.id, letter: letter});
});
load();
</script>
</body>
</html>
""".replace("__IR_WIDTH__", str(IR_DISPLAY_WIDTH)).replace("__VQA_WIDTH__", str(VQA_FRAME_WIDTH))
