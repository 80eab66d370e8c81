// The span editor: a Streamlit (components v2) component, plain JavaScript, no build step.
// Shows the tokens with one lane per span type under them (so overlapping DSE and ESE spans
// are both visible), a label chip with the model's confidence at each span's start (in the
// flow of its lane, so that chips never cover each other), and spans under the review
// threshold flagged.  A word in a DSE has the DSE colour as background, in an ESE an underline.  Every edit is sent to Python as an "event"
// trigger value; Python saves it and sends the document back.  All text goes in through
// textContent (never innerHTML), so user text is always escaped.
//
// Mouse: click a word in a span to select the span (in two or more, the innermost; click it again for the
// next, then the word alone), or its lane or chip; press on a word and drag (or click a word, shift+click
// another) to select words.  A DSE selected has its holder (dashed) and its targets (dotted) outlined in the text.
// Keys: d / 1 DSE, e / 2 ESE (label the selected words or relabel the selected span);
// x / Delete delete the span; shift+left/right move the span's end, alt+left/right its start;
// i / p step the span's intensity / polarity; h on a DSE steps its holder (writer, implicit, none, not
// set), or, with words selected after clicking a DSE, makes those words its holder; t, with words selected after
// clicking a DSE, makes them one of its targets (or, when they are one, no longer), and without words steps its
// targets between not set and none; k on a DSE steps its attitude (the attitude types, none, not set);
// u / ctrl+z undo; a accept the document; n next unfinished document; Escape clear.  A key with nothing to
// act on says so in the line above the text.  The span selected stays selected after i, p, h, t and k.
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data) return;
  let root = parentElement.querySelector(".ot-editor");
  if (!root) {
    root = document.createElement("div");
    root.className = "ot-editor";
    parentElement.appendChild(root);
  }
  root.replaceChildren();
  root.dataset.version = String(data.version); // the version it shows (its edits are checked against it)
  const types = data.types;
  const keys = data.keys; // {"d": "DSE", "e": "ESE", "1": "DSE", ...}
  // the selection survives a redraw of the same document (a rerun between selecting and a key)
  const kept = parentElement.__otSelection;
  // dse: the DSE last clicked, whose holder is shown and set (it stays while words are selected for its holder)
  const state = kept && kept.doc === data.doc ? { dse: null, ...kept, dragging: false }
    : { doc: data.doc, anchor: null, focus: null, span: null, dse: null, dragging: false };
  state.press = null; // the word the mouse went down on (a click, or the start of a drag)
  state.cycle = null; // the word clicked last and the DSE chosen before (a click again goes on to the next)
  if (state.anchor !== null && (state.anchor >= data.tokens.length || state.focus >= data.tokens.length))
    state.anchor = state.focus = null;
  // a span kept by its type and tokens (and its id where it still has it): an edit of a copy not made yet makes
  // the copy, whose spans have new ids
  const found = (id, key, type) => {
    const fits = (s) => (!type || s.type === type) && (!key || (s.type === key[0] && s.start === key[1] && s.end === key[2]));
    const s = data.spans.find((x) => x.id === id && fits(x)) || (key ? data.spans.find(fits) : null);
    return s ? s.id : null;
  };
  state.span = state.span === null ? null : found(state.span, state.spanKey);
  state.dse = state.dse === null ? null : found(state.dse, state.dseKey, "DSE");
  // Keys pressed (and toolbar buttons clicked) while an edit is on its way (from send until the editor is drawn
  // again with the document the page returns) are held and replayed on that drawing: this drawing's version is
  // then out of date, and the page would refuse an edit made on it as stale.  If no drawing comes within
  // HOLD_MS, keys act here again.
  const HOLD_MS = 5000;
  // this drawing's number: Streamlit draws again into the same element without always calling the clean-up
  // below, so the listeners of earlier drawings (each with its own version of the document) are still there
  // and must let a key pass
  const drawing = (parentElement.__otDrawing = (parentElement.__otDrawing || 0) + 1);
  const held = parentElement.__otHeld;
  parentElement.__otHeld = null;
  const send = (ev) => {
    parentElement.__otSelection = null; // an edit ends the selection (i, p and h keep it: ``keep``)
    parentElement.__otHeld = { keys: [], since: Date.now() };
    setTriggerValue("event", { ...ev, doc: data.doc, version: data.version });
  };
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // toolbar: label buttons, actions, the current selection
  const bar = el("div", "ot-bar");
  const labelButtons = types.map((t) => {
    const key = Object.keys(keys).find((k) => keys[k] === t && isNaN(Number(k))) || "";
    const b = el("button", "ot-label", `${t} (${key})`);
    b.dataset.type = t;
    b.style.background = data.colors[t] || "#ddd";
    // a click is its key: held like one while an edit is on its way (a type without a letter key acts now)
    b.addEventListener("click", () => (key ? press({ key }) : label(t)));
    bar.appendChild(b);
    return b;
  });
  const delButton = el("button", "ot-act", "Delete span (x)");
  delButton.addEventListener("click", () => press({ key: "x" }));
  bar.appendChild(delButton);
  const holderButton = el("button", "ot-act", "Holder (h)");
  holderButton.addEventListener("click", () => press({ key: "h" }));
  bar.appendChild(holderButton);
  const targetButton = el("button", "ot-act", "Target (t)");
  targetButton.addEventListener("click", () => press({ key: "t" }));
  bar.appendChild(targetButton);
  const info = el("span", "ot-info");
  bar.appendChild(info);
  root.appendChild(bar);

  // the text
  const text = el("div", "ot-text");
  text.setAttribute("role", "document");
  root.appendChild(text);
  const tokEls = [];
  const laneEls = {}; // type -> [cell per token]
  types.forEach((t) => (laneEls[t] = []));
  const spanAt = {}; // type -> token index -> span
  types.forEach((t) => (spanAt[t] = {}));
  data.spans.forEach((s) => {
    for (let i = s.start; i < s.end; i++) spanAt[s.type][i] = s;
  });
  // the text's own spacing: between two tokens exactly what the text has between them (a space, a line
  // break, or nothing: "money." and "I'd" stay together), and tokens with nothing between them in one
  // unbreakable group, so a line never breaks inside a word
  let pos = 0;
  let group = null;
  data.tokens.forEach((tok, i) => {
    const gap = data.text.slice(pos, tok.start);
    if (gap) {
      const parts = gap.split("\n");
      parts.forEach((p, k) => {
        if (k > 0) text.appendChild(document.createElement("br"));
        if (p) text.appendChild(el("span", "ot-gap", p));
      });
    }
    if (gap || !group) {
      group = el("span", "ot-group");
      text.appendChild(group);
    }
    pos = tok.end;
    const t = el("span", "ot-tok");
    t.dataset.i = String(i);
    const w = el("span", "ot-word", data.text.slice(tok.start, tok.end));
    t.appendChild(w);
    const covering = [];
    types.forEach((ty) => {
      const cell = el("span", "ot-lane");
      const s = spanAt[ty][i];
      if (s) {
        covering.push(ty);
        cell.classList.add("on");
        cell.style.background = data.colors[ty] || "#ddd";
        cell.dataset.span = String(s.id);
        if (s.low) cell.classList.add("low");
        if (s.start === i) {
          const conf = s.source === "model" && s.score !== null ? ` ${s.score.toFixed(2)}` : " ✎";
          const chip = el("span", "ot-chip", `${s.low ? "⚠ " : ""}${ty}${conf}`);
          chip.title = s.source === "model" ? `model, confidence ${s.score}` : `by ${s.annotator || "?"} at ${s.at || "?"}`;
          chip.dataset.span = String(s.id);
          cell.appendChild(chip);
        }
        cell.addEventListener("mousedown", (ev) => {
          ev.preventDefault();
          releaseFocus();
          ev.stopPropagation();
          state.cycle = null;
          pickSpan(s);
          paint();
        });
      }
      laneEls[ty].push(cell);
      t.appendChild(cell);
    });
    // two types stay distinct on the word: the first type (DSE) as background, others as underlines
    const underlines = [];
    covering.forEach((ty) => {
      if (ty === types[0]) w.style.background = data.colors[ty];
      else underlines.push(`inset 0 -${3 * (underlines.length + 1)}px 0 ${data.lines[ty] || data.colors[ty]}`);
    });
    if (underlines.length) w.style.boxShadow = underlines.join(", ");
    covering.forEach((ty) => w.classList.add(`in-${ty.toLowerCase()}`));
    if (covering.length) w.classList.add("in-span");
    // a click (the mouse up on the word it went down on) selects the word's span (clickWord); a drag, or
    // shift+click, selects words (state.dse stays: the words may be its holder)
    w.addEventListener("mousedown", (ev) => {
      ev.preventDefault();
      releaseFocus();
      state.cycle = state.cycle && state.cycle.tok === i ? state.cycle : null;
      if (ev.shiftKey) {
        if (state.anchor === null) state.anchor = i;
        state.focus = i;
        state.span = null;
        paint();
        return;
      }
      state.press = i;
      state.dragging = true;
    });
    w.addEventListener("mouseenter", () => {
      if (!state.dragging) return;
      if (state.press !== null) {
        state.anchor = state.press;
        state.press = null; // a drag, not a click
        state.span = null;
        state.cycle = null;
      }
      state.focus = i;
      paint();
    });
    group.appendChild(t);
    tokEls.push(t);
  });
  const stopDrag = () => {
    if (state.dragging && state.press !== null) clickWord(state.press);
    state.dragging = false;
    state.press = null;
  };
  document.addEventListener("mouseup", stopDrag);

  // A chip lies over its lane after its span's first word, so the word keeps its own width and the text its
  // own spacing.  A chip that would run into the next chip of its lane, or out of the text box, makes its word
  // as wide as itself instead (the chips never cover each other).  Again whenever the box changes width.
  function placeChips() {
    tokEls.forEach((t) => (t.style.minWidth = ""));
    const right = text.getBoundingClientRect().right - parseFloat(getComputedStyle(text).paddingRight || "0");
    types.forEach((ty) => {
      const chips = laneEls[ty].map((cell) => cell.querySelector(".ot-chip")).filter(Boolean);
      chips.forEach((chip, k) => {
        const a = chip.getBoundingClientRect();
        const b = k + 1 < chips.length ? chips[k + 1].getBoundingClientRect() : null;
        const meets = b && Math.abs(b.top - a.top) < 1 && a.right + 4 > b.left;
        if (meets || a.right > right || a.width === 0) chip.closest(".ot-tok").style.minWidth = `${a.width}px`;
      });
    });
  }
  placeChips();
  let lastWidth = text.clientWidth;
  const resized = typeof ResizeObserver === "function"
    ? new ResizeObserver(() => {
        if (text.clientWidth === lastWidth) return; // (placing chips changes the height alone)
        lastWidth = text.clientWidth;
        placeChips();
      })
    : null;
  if (resized) resized.observe(text);

  // keys go to the editor once the text is clicked, even if a text box had the focus
  function releaseFocus() {
    const active = document.activeElement;
    if (active && active !== document.body && typeof active.blur === "function") active.blur();
  }
  const selected = () => {
    if (state.anchor === null) return null;
    return [Math.min(state.anchor, state.focus), Math.max(state.anchor, state.focus) + 1];
  };
  const spanById = (id) => data.spans.find((s) => s.id === id);
  const keyOf = (id) => {
    const s = id === null ? null : spanById(id);
    return s ? [s.type, s.start, s.end] : null;
  };
  // what the next drawing of this document starts with (a redraw between selecting and a key keeps it)
  function remember() {
    parentElement.__otSelection = {
      doc: data.doc, anchor: state.anchor, focus: state.focus, span: state.span, dse: state.dse,
      spanKey: keyOf(state.span), dseKey: keyOf(state.dse),
    };
  }
  // after an edit of the span selected (i, p, h): the next drawing selects it again, so the next press acts on it
  function keep(sp) {
    state.anchor = state.focus = null;
    state.span = sp.id;
    remember();
  }
  function pickSpan(s) {
    state.span = s.id;
    state.dse = s.type === "DSE" ? s.id : null;
    state.anchor = state.focus = null;
  }
  // the spans over token i, the innermost (fewest tokens) first
  const spansOver = (i) => data.spans
    .filter((s) => s.start <= i && i < s.end)
    .sort((a, b) => a.end - a.start - (b.end - b.start) || types.indexOf(a.type) - types.indexOf(b.type));
  // a click on word i: its span (the innermost); clicked again, the next span over it, then the word alone (with
  // the DSE chosen before the first click, so the word can be its holder), then the innermost span again
  function clickWord(i) {
    const over = spansOver(i);
    const again = state.cycle && state.cycle.tok === i;
    if (!again) state.cycle = { tok: i, dse: state.dse };
    const options = [...over.map((s) => s.id), "word"];
    let at = -1;
    if (again && state.span !== null) at = options.indexOf(state.span);
    else if (again && state.anchor === i && state.focus === i) at = options.length - 1;
    const next = options[(at + 1) % options.length];
    if (next === "word") {
      state.anchor = state.focus = i;
      state.span = null;
      state.dse = state.cycle.dse;
    } else pickSpan(spanById(next));
    paint();
  }
  // a key with nothing to act on says so (in the line above the text, until the next change of selection)
  function say(message) {
    info.textContent = message;
    info.classList.add("ot-notice");
  }
  const NO_SPAN = "click a span (or a word in it) first";
  // MPQA's attributes of the picked span: each press of i / p takes the next value, then none
  function cycle(name, values) {
    const sp = state.span !== null ? spanById(state.span) : null;
    if (!sp || !values) return say(`${name === "intensity" ? "i" : "p"} sets a span's ${name}: ${NO_SPAN}.`);
    const at = values.indexOf(sp[name]);
    const next = at + 1 < values.length ? values[at + 1] : null;
    send({ op: "attributes", span: sp.id, [name]: next }); // the other values stay as they are
    keep(sp);
  }
  // a DSE's holder: the selected words, or (none selected) the next of writer, implicit, none, not set
  function holder() {
    const dse = state.dse !== null ? spanById(state.dse) : null;
    const sp = state.span !== null ? spanById(state.span) : null;
    if (!dse && sp) return say(`h sets a DSE's holder: only a DSE has one, and this is an ${sp.type}.`);
    if (!dse) return say(`h sets a DSE's holder: click a DSE (or a word in it) first.`);
    const sel = selected();
    if (sel) send({ op: "holder", span: dse.id, holder: { start: sel[0], end: sel[1] } });
    else {
      const at = data.holders.indexOf(dse.holder);
      send({ op: "holder", span: dse.id, holder: at + 1 < data.holders.length ? data.holders[at + 1] : null });
    }
    state.dse = dse.id;
    keep(dse);
  }
  // the DSE a role key acts on (the DSE clicked last), or null after saying why there is none
  function roleDse(key, role) {
    const dse = state.dse !== null ? spanById(state.dse) : null;
    const sp = state.span !== null ? spanById(state.span) : null;
    const some = role === "targets" ? "them" : "one";
    if (!dse && sp) say(`${key} sets a DSE's ${role}: only a DSE has ${some}, and this is an ${sp.type}.`);
    else if (!dse) say(`${key} sets a DSE's ${role}: click a DSE (or a word in it) first.`);
    return dse;
  }
  // the selected words as one of the DSE's targets, or no longer one; without words, its targets not set <-> none
  function target() {
    const dse = roleDse("t", "targets");
    if (!dse) return;
    const sel = selected();
    const words = `DSE “${wordsOf(dse.start, dse.end)}”`;
    if (sel) send({ op: "target", span: dse.id, target: { start: sel[0], end: sel[1] } });
    else if (!dse.targets) send({ op: "targets", span: dse.id, targets: [] });
    else if (!dse.targets.length) send({ op: "targets", span: dse.id, targets: null });
    else return say(`t adds or removes a target of ${words}: select the target's words, then t.`);
    state.dse = dse.id;
    keep(dse);
  }
  // a DSE's attitude: the next of the attitude types, none, not set
  function attitude() {
    const dse = roleDse("k", "attitude");
    if (!dse) return;
    const at = data.attitudes.indexOf(dse.attitude);
    send({ op: "attitude", span: dse.id, attitude: at + 1 < data.attitudes.length ? data.attitudes[at + 1] : null });
    state.dse = dse.id;
    keep(dse);
  }
  const isTarget = (dse, sel) => !!dse.targets && dse.targets.some((t) => t.start === sel[0] && t.end === sel[1]);
  // a value and where it came from: "high (model 0.62)", "high ✎" (a person's)
  const valued = (sp, name, value) => `${value}${sp.from && sp.from[name] === "human" ? " ✎" : sp.from && sp.from[name] ? ` (${sp.from[name]})` : ""}`;
  const wordsOf = (a, b) => data.text.slice(data.tokens[a].start, data.tokens[b - 1].end);
  function holderText(sp) {
    if (!sp || sp.holder === null || sp.holder === undefined) return "";
    const h = typeof sp.holder === "object" ? `“${wordsOf(sp.holder.start, sp.holder.end)}”` : sp.holder;
    return ` · holder ${valued(sp, "holder", h)}`;
  }
  // a DSE's attitude and targets, each with where it came from (none: set, empty; nothing shown while not set)
  function rolesText(sp) {
    if (!sp || sp.type !== "DSE") return "";
    const mark = (from) => (from === "human" ? " ✎" : from ? ` (${from})` : "");
    const targets = sp.targets && sp.targets.length
      ? sp.targets.map((t) => `“${wordsOf(t.start, t.end)}”${mark(t.from)}`).join(", ")
      : sp.targets ? `none${mark(sp.from && sp.from.targets)}` : "";
    const shown = sp.attitude ? ` · attitude ${valued(sp, "attitude", sp.attitude)}` : "";
    return shown + (targets ? ` · targets ${targets}` : "");
  }

  function paint() {
    remember();
    info.classList.remove("ot-notice");
    const sel = selected();
    tokEls.forEach((t, i) => t.classList.toggle("sel", !!sel && i >= sel[0] && i < sel[1]));
    types.forEach((ty) => laneEls[ty].forEach((c) => c.classList.toggle("picked", state.span !== null && c.dataset.span === String(state.span))));
    const sp = state.span !== null ? spanById(state.span) : null;
    const dse = state.dse !== null ? spanById(state.dse) : null;
    const h = dse && dse.holder && typeof dse.holder === "object" ? dse.holder : null; // its holder's words, outlined
    tokEls.forEach((t, i) => t.classList.toggle("holder", !!h && i >= h.start && i < h.end));
    const targets = (dse && dse.targets) || []; // and its targets' words
    tokEls.forEach((t, i) => t.classList.toggle("target", targets.some((x) => i >= x.start && i < x.end)));
    if (sp) {
      info.textContent = `${sp.type} “${wordsOf(sp.start, sp.end)}” — ${sp.source === "model" ? "model " + sp.score.toFixed(2) : "by " + (sp.annotator || "?")}`
        + (sp.intensity ? ` · intensity ${valued(sp, "intensity", sp.intensity)}` : "")
        + (sp.polarity ? ` · polarity ${valued(sp, "polarity", sp.polarity)}` : "") + holderText(sp) + rolesText(sp)
        + " · d/e relabel · x delete · shift/alt+←/→ resize · i intensity · p polarity"
        + (sp.type === "DSE" ? " · h holder (or select its words, then h) · k attitude" : "")
        + (sp.type === "DSE" ? " · t target (select its words, then t)" : "");
    } else if (sel) {
      info.textContent = `“${wordsOf(sel[0], sel[1])}” · press ${Object.keys(keys).filter((k) => isNaN(Number(k))).join(" or ")} to label`
        + (dse ? `, h to make them the holder of DSE “${wordsOf(dse.start, dse.end)}”` : "")
        + (dse ? `, t to ${isTarget(dse, sel) ? "remove them from its targets" : "add them to its targets"}` : "")
        + (sel[1] - sel[0] === 1 && spansOver(sel[0]).length ? " · click the word again for its span" : "");
    } else info.textContent = "Click a span (or a word in it), or select words with the mouse (drag, or shift+click).";
    delButton.disabled = !sp;
    holderButton.disabled = !dse;
    targetButton.disabled = !dse;
    labelButtons.forEach((b) => (b.disabled = !sp && !sel));
  }

  function label(type) {
    const sel = selected();
    if (state.span !== null) send({ op: "change", span: state.span, type });
    else if (sel) send({ op: "add", type, start: sel[0], end: sel[1] });
    else say(`Nothing to label ${type}: select words (drag, or shift+click) or ${NO_SPAN}.`);
  }
  function removeSpan() {
    if (state.span !== null) send({ op: "delete", span: state.span });
    else say(`x deletes a span: ${NO_SPAN}.`);
  }
  function resize(edge, delta) {
    const sp = state.span !== null ? spanById(state.span) : null;
    if (sp) {
      const start = edge === "start" ? sp.start + delta : sp.start;
      const end = edge === "end" ? sp.end + delta : sp.end;
      if (end > start && start >= 0 && end <= data.tokens.length) send({ op: "change", span: sp.id, start, end });
      else say(`The span's ${edge} cannot move further that way.`);
    } else if (state.anchor !== null) {
      state.focus = Math.max(0, Math.min(data.tokens.length - 1, state.focus + delta));
      paint();
    } else say(`shift/alt+←/→ resize a span: ${NO_SPAN}.`);
  }

  // what a key does here (a function), or null for a key the editor leaves to the page
  const command = (ev) => {
    const k = ev.key.toLowerCase();
    if ((ev.ctrlKey || ev.metaKey) && k === "z") return () => send({ op: "undo" });
    if (ev.ctrlKey || ev.metaKey) return null;
    if (ev.key === "ArrowRight" && (ev.shiftKey || ev.altKey)) return () => resize(ev.altKey ? "start" : "end", 1);
    if (ev.key === "ArrowLeft" && (ev.shiftKey || ev.altKey)) return () => resize(ev.altKey ? "start" : "end", -1);
    if (keys[k]) return () => label(keys[k]);
    if (k === "x" || ev.key === "Delete" || ev.key === "Backspace") return removeSpan;
    if (k === "u") return () => send({ op: "undo" });
    if (k === "a") return () => send({ op: "accept" });
    if (k === "r") return () => send({ op: "reject" });
    if (k === "i") return () => cycle("intensity", data.intensities);
    if (k === "p") return () => cycle("polarity", data.polarities);
    if (k === "h") return holder;
    if (k === "t") return target;
    if (k === "k") return attitude;
    if (k === "n") return () => send({ op: "next" });
    if (ev.key === "Escape")
      return () => {
        state.anchor = state.focus = state.span = state.dse = state.cycle = null;
        paint();
      };
    return null;
  };
  // a key pressed now, or one held earlier: held while an edit is on its way, else done
  const press = (key) => {
    const h = parentElement.__otHeld;
    if (h && Date.now() - h.since < HOLD_MS) return void h.keys.push(key);
    parentElement.__otHeld = null;
    if (h && h.keys.length) {
      h.keys.forEach(press); // no drawing came back in time: the held keys act on this one after all,
      return void press(key); // then this key (held again if one of them sent an edit)
    }
    const run = command(key);
    if (run) run();
  };
  const onKey = (ev) => {
    const target = ev.composedPath ? ev.composedPath()[0] : ev.target;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    if (parentElement.__otDrawing !== drawing) return void document.removeEventListener("keydown", onKey, true);
    if (!root.isConnected || !command(ev)) return;
    ev.preventDefault();
    ev.stopPropagation();
    press({ key: ev.key, shiftKey: ev.shiftKey, altKey: ev.altKey, ctrlKey: ev.ctrlKey, metaKey: ev.metaKey });
  };
  document.addEventListener("keydown", onKey, true);
  paint();
  if (held) held.keys.forEach(press); // the keys pressed while this document was on its way
  return () => {
    if (resized) resized.disconnect();
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("mouseup", stopDrag);
  };
}
