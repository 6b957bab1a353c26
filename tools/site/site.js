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
  document.documentElement.dataset.math = 'done';
});
