// Branch switching for an exported rab session. Every entry of the tree is in the
// page; one branch (a root-to-leaf path) is shown at a time. Each entry carries
// data-parent (its parent's element id) and data-tip (the newest leaf below it).
(function () {
  'use strict';
  var entries = Array.prototype.slice.call(document.querySelectorAll('section.entry'));
  var byId = {};
  entries.forEach(function (e) { byId[e.id] = e; });

  // Shows the path from the root to `leafId`; hides every other entry.
  function show(leafId) {
    var on = {};
    var id = leafId;
    // The step limit guards against a parent cycle in a hand-edited tape.
    for (var n = 0; id && byId[id] && !on[id] && n <= entries.length; n++) {
      on[id] = true;
      id = byId[id].getAttribute('data-parent');
    }
    entries.forEach(function (e) { e.classList.toggle('off', !on[e.id]); });
    document.querySelectorAll('a.seg').forEach(function (a) {
      a.classList.toggle('current', !!on[a.getAttribute('href').slice(1)]);
    });
  }

  // Brings entry `id` into view, switching to the newest branch through it when it is
  // not on the branch shown.
  function go(id) {
    var target = byId[id];
    if (!target) return false;
    if (target.classList.contains('off')) show(target.getAttribute('data-tip'));
    target.scrollIntoView({ block: 'start' });
    target.classList.add('flash');
    setTimeout(function () { target.classList.remove('flash'); }, 1200);
    return true;
  }

  document.addEventListener('click', function (ev) {
    var a = ev.target.closest ? ev.target.closest('a[href^="#e-"]') : null;
    if (!a) return;
    var id = a.getAttribute('href').slice(1);
    if (!go(id)) return;
    ev.preventDefault();
    try { history.pushState(null, '', '#' + id); } catch (e) { /* some file:// setups refuse */ }
  });

  function fromHash() {
    try { go(decodeURIComponent(location.hash.slice(1))); } catch (e) { /* malformed hash */ }
  }
  window.addEventListener('hashchange', fromHash);
  var all = document.getElementById('show-all');
  if (all) {
    all.addEventListener('change', function () { document.body.classList.toggle('all', all.checked); });
  }
  if (location.hash) fromHash();
})();
