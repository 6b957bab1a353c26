// Typeset the math left in the page as $...$, $$...$$, \(...\) and \[...\] with the bundled KaTeX.
document.addEventListener('DOMContentLoaded', () => {
  const env = name => ({left: `\\begin{${name}}`, right: `\\end{${name}}`, display: true});
  renderMathInElement(document.body, {
    delimiters: [
      {left: '$$', right: '$$', display: true},
      {left: '\\[', right: '\\]', display: true},
      env('equation'), env('equation*'), env('align'), env('align*'), env('gather'), env('gather*'),
      {left: '$', right: '$', display: false},
      {left: '\\(', right: '\\)', display: false},
    ],
    ignoredTags: ['script', 'noscript', 'style', 'textarea', 'pre', 'code', 'option'],
    throwOnError: true,  // a formula KaTeX cannot parse stays as text and logs a console error (tools/test_docs.py fails on it)
  });
  markOverflow();
  document.documentElement.dataset.math = 'done';
});

// The "Pages" and "On this page" menus: open as columns on a wide window, collapsed (a click away) on a narrow one.
document.querySelectorAll('details[data-wide]').forEach(d => {
  const wide = matchMedia(d.dataset.wide);
  const sync = () => { d.open = wide.matches; };
  sync(); wide.addEventListener('change', sync);
  d.querySelectorAll('a').forEach(a => a.addEventListener('click', () => { if (!wide.matches) d.open = false; }));
});

// Boxes wider than the column scroll sideways: mark them (site.css fades their right edge until the end is reached)
// and say so above tables and outputs.
function markOverflow() {
  document.querySelectorAll('main table, main pre, main div.output.html, main .katex-display').forEach(el => {
    const over = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle('scrolls-x', over);
    const note = el.previousElementSibling && el.previousElementSibling.classList.contains('scroll-note') ? el.previousElementSibling : null;
    if (over && !note && el.matches('table, div.output.html') && !el.closest('div.output.html.scrolls-x')) {
      const n = document.createElement('p'); n.className = 'scroll-note'; n.textContent = 'scroll sideways for more';
      el.before(n);
    } else if (!over && note) note.remove();
    const atEnd = () => el.classList.toggle('at-end', el.scrollLeft + el.clientWidth >= el.scrollWidth - 2);
    atEnd();
    if (!el.dataset.watched) { el.dataset.watched = '1'; el.addEventListener('scroll', atEnd, {passive: true}); }
  });
}
// Figures shrunk to fit the column open at full size: say so under them.
function markShrunk() {
  document.querySelectorAll('figure a.zoom img').forEach(img => {
    const a = img.parentElement, shrunk = img.complete && img.naturalWidth > img.clientWidth * 1.1;
    let note = a.nextElementSibling && a.nextElementSibling.classList.contains('zoom-note') ? a.nextElementSibling : null;
    if (shrunk && !note) {
      note = document.createElement('a'); note.className = 'zoom-note'; note.href = a.getAttribute('href'); note.target = '_blank';
      a.after(note);
    }
    if (shrunk) note.textContent = `Shrunk to fit: open at full size (${img.naturalWidth} px wide)`;
    else if (note) note.remove();
  });
}
const relayout = () => { markOverflow(); markShrunk(); };
window.addEventListener('load', relayout);
window.addEventListener('resize', () => { clearTimeout(relayout.t); relayout.t = setTimeout(relayout, 100); });
