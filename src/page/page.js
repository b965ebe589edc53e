// The page of `claude-mem export --html`: builds what it shows from the JSON in the two data
// elements, with textContent only (the data is never parsed as HTML), and filters it as the
// search box is typed in. It fetches nothing: the page's policy forbids every request.
'use strict';
(function () {
  var PAGE = 50;
  var about = JSON.parse(document.getElementById('about').textContent);
  var sessions = JSON.parse(document.getElementById('sessions').textContent);
  sessions.reverse(); // the export is oldest first; the page reads newest first

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // `text` with each of `terms` marked where it occurs; text nodes only.
  function marked(tag, cls, text, terms) {
    var node = el(tag, cls);
    text = String(text || '');
    var lower = text.toLowerCase();
    var at = 0;
    while (at < text.length) {
      var next = -1, len = 0;
      terms.forEach(function (t) {
        var i = lower.indexOf(t, at);
        if (i >= 0 && (next < 0 || i < next || (i === next && t.length > len))) {
          next = i; len = t.length;
        }
      });
      if (next < 0) break;
      if (next > at) node.appendChild(document.createTextNode(text.slice(at, next)));
      node.appendChild(el('mark', null, text.slice(next, next + len)));
      at = next + len;
    }
    if (at < text.length) node.appendChild(document.createTextNode(text.slice(at)));
    return node;
  }

  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function day(iso) {
    var d = new Date(iso);
    return isNaN(d) ? String(iso).slice(0, 10)
      : d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate());
  }
  function time(iso) {
    var d = new Date(iso);
    return isNaN(d) ? '' : pad(d.getHours()) + ':' + pad(d.getMinutes());
  }

  // Every shown thing of a session, in the order shown, with the texts search looks in
  // (lower-cased on the first search, not while the page opens).
  function itemsOf(s) {
    var items = [];
    function add(kind, value, words, turn) {
      items.push({ kind: kind, value: value, turn: turn, words: words, text: null });
    }
    s.summaries.forEach(function (m) {
      add('summary', m, [m.request, m.investigated, m.learned, m.completed, m.next_steps,
        m.notes || '']);
    });
    s.memories.forEach(function (m) {
      add('memory', m, [m.kind, m.title, m.subtitle || '', m.narrative]
        .concat(m.facts, m.concepts, m.files));
    });
    s.turns.forEach(function (t) {
      if (t.prompt) add('prompt', t, [t.prompt], t);
      t.calls.forEach(function (c) { add('call', c, [c.tool, c.input, c.answer], t); });
      t.replies.forEach(function (r) { add('reply', r, [r], t); });
    });
    return items;
  }
  sessions.forEach(function (s) {
    s.items = itemsOf(s);
    s.head = [s.id, s.project || '', s.agent, s.model || ''].join('\n').toLowerCase();
  });
  function textOf(item) {
    if (item.text === null) {
      item.text = item.words.join('\n').toLowerCase();
      item.words = null;
    }
    return item.text;
  }

  function field(parent, label, text, terms) {
    if (!text) return;
    var row = el('div', 'field');
    row.appendChild(el('span', 'label', label + ': '));
    row.appendChild(marked('span', null, text, terms));
    parent.appendChild(row);
  }

  function list(parent, label, values, terms) {
    if (!values || !values.length) return;
    var row = el('div', 'field');
    row.appendChild(el('span', 'label', label + ': '));
    var ul = el('ul');
    values.forEach(function (v) { ul.appendChild(marked('li', null, v, terms)); });
    row.appendChild(ul);
    parent.appendChild(row);
  }

  var render = {
    summary: function (m, terms) {
      var box = el('div', 'item summary');
      box.appendChild(el('div', 'kind', 'Summary'));
      field(box, 'Request', m.request, terms);
      field(box, 'Investigated', m.investigated, terms);
      field(box, 'Learned', m.learned, terms);
      field(box, 'Completed', m.completed, terms);
      field(box, 'Next steps', m.next_steps, terms);
      field(box, 'Notes', m.notes, terms);
      return box;
    },
    memory: function (m, terms) {
      var box = el('div', 'item memory');
      box.appendChild(marked('div', 'kind', 'Memory [' + m.kind + ']', terms));
      box.appendChild(marked('div', 'title', m.title, terms));
      if (m.subtitle) box.appendChild(marked('div', 'subtitle', m.subtitle, terms));
      box.appendChild(marked('p', 'text', m.narrative, terms));
      list(box, 'Facts', m.facts, terms);
      list(box, 'Concepts', m.concepts, terms);
      list(box, 'Files', m.files, terms);
      return box;
    },
    prompt: function (t, terms) {
      var box = el('div', 'item prompt');
      box.appendChild(el('div', 'kind', 'Prompt' + (t.n ? ' ' + t.n : '') +
        (t.at ? ' at ' + time(t.at) : '')));
      box.appendChild(marked('p', 'text', t.prompt, terms));
      return box;
    },
    call: function (c, terms) {
      var box = el('div', 'item call' + (c.failed ? ' failed' : ''));
      var head = el('div', 'kind');
      head.appendChild(marked('span', 'tool', c.tool, terms));
      head.appendChild(document.createTextNode(c.failed ? ' call (failed)' : ' call'));
      box.appendChild(head);
      if (c.input) box.appendChild(marked('pre', 'input', c.input, terms));
      if (c.answer) {
        var more = el('details');
        more.appendChild(el('summary', null, c.failed ? 'Error' : 'Answer'));
        more.appendChild(marked('pre', 'answer', c.answer, terms));
        more.open = terms.length > 0 && c.answer.toLowerCase().indexOf(terms[0]) >= 0;
        box.appendChild(more);
      }
      return box;
    },
    reply: function (r, terms) {
      var box = el('div', 'item reply');
      box.appendChild(el('div', 'kind', 'Claude'));
      box.appendChild(marked('p', 'text', r, terms));
      return box;
    }
  };

  function sessionNode(s, items, terms) {
    var node = el('section', 'session');
    var head = el('h3');
    head.appendChild(document.createTextNode(time(s.started) + ' '));
    head.appendChild(marked('span', 'project', s.project || '(no project)', terms));
    node.appendChild(head);
    var facts = [s.agent, s.model, 'session ' + s.id.slice(0, 8),
      s.ended ? 'ended ' + time(s.ended) : 'open'];
    if (s.private_turns) facts.push(s.private_turns + ' private prompt' +
      (s.private_turns === 1 ? '' : 's') + ', not recorded');
    node.appendChild(el('div', 'meta', facts.filter(Boolean).join(' · ')));
    var turn = null;
    items.forEach(function (item) {
      // A call or an answer found without its prompt still says which prompt it followed.
      if (item.turn && item.turn !== turn && item.kind !== 'prompt' && item.turn.prompt) {
        var line = item.turn.prompt.replace(/\s+/g, ' ');
        node.appendChild(el('div', 'context', 'After prompt ' + item.turn.n + ': ' +
          (line.length > 120 ? line.slice(0, 120) + '…' : line)));
      }
      turn = item.turn || turn;
      node.appendChild(render[item.kind](item.value, terms));
    });
    if (!items.length) node.appendChild(el('p', 'empty', 'Nothing recorded.'));
    return node;
  }

  var box = document.getElementById('search');
  var status = document.getElementById('status');
  var main = document.getElementById('results');
  var moreButton = document.getElementById('more');
  var shown = PAGE;

  function matches(terms) {
    var found = [];
    sessions.forEach(function (s) {
      if (!terms.length) { found.push({ s: s, items: s.items }); return; }
      var items = s.items.filter(function (item) {
        return terms.every(function (t) {
          return textOf(item).indexOf(t) >= 0 || s.head.indexOf(t) >= 0;
        });
      });
      if (items.length) found.push({ s: s, items: items });
    });
    return found;
  }

  function count(n, what) {
    return n.toLocaleString('en') + ' ' + what + (n === 1 ? '' : 's');
  }

  function update() {
    var query = box.value.trim().toLowerCase();
    var terms = query ? query.split(/\s+/) : [];
    var found = matches(terms);
    main.textContent = '';
    var lastDay = null;
    found.slice(0, shown).forEach(function (f) {
      var d = day(f.s.started);
      if (d !== lastDay) { main.appendChild(el('h2', null, d)); lastDay = d; }
      main.appendChild(sessionNode(f.s, f.items, terms));
    });
    var items = found.reduce(function (n, f) { return n + f.items.length; }, 0);
    var said = terms.length
      ? count(items, 'item') + ' in ' + count(found.length, 'session') + ' match'
      : count(sessions.length, 'session');
    if (found.length > shown) said += ', the newest ' + shown.toLocaleString('en') + ' shown';
    status.textContent = said + '.';
    moreButton.hidden = found.length <= shown;
  }

  document.title = about.title;
  document.getElementById('title').textContent = about.title;
  var made = ['Exported ' + (about.exported_at || '') + ' by claude-mem ' +
    (about.claude_mem || '')];
  if (about.since) made.push('since ' + about.since);
  if (about.until) made.push('until ' + about.until);
  document.getElementById('made').textContent = made.join(', ') + '.';

  var timer = null;
  box.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () { shown = PAGE; update(); }, 60);
  });
  moreButton.addEventListener('click', function () { shown += PAGE; update(); });
  document.addEventListener('keydown', function (e) {
    if (e.key === '/' && document.activeElement !== box) { e.preventDefault(); box.focus(); }
  });
  update();
})();
