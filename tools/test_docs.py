#!/usr/bin/env python
"""Open every page of the built docs site in headless Chromium, served from 127.0.0.1, and check what a reader gets.

Per page: no console errors or uncaught exceptions, no failed or outside requests, math typeset (no raw `$$`,
`\\frac`, `\\begin{` or `$...\\cmd...$` left in the text, no KaTeX error), every image loaded, every link into the
site and every anchor resolves. Then the page's whole length, scrolled through one window height at a time, at
1280 and at 800 pixels wide: nothing wider than the page or sticking out of the text column unless inside a box
that scrolls sideways, every image shown, with alt text, and openable at full size where the column shrinks it, no
KaTeX error; the column at least 45rem wide at 1280, and the page's text starting near the top at 800 (the menus
collapsed). Every notebook must have its page. Saves a screenshot of each page under ci-artifacts/screenshots
(with --full-page, the whole page, in tiles of up to 16,000 pixels). Needs Debian's chromium (`apt-get install -y chromium`) and `websocket-client`;
installs nothing. Exits 1 on any failure.

    python tools/build_docs.py && python tools/test_docs.py
"""
import argparse, base64, json, shutil, subprocess, sys, tempfile, threading, time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urldefrag, unquote

import websocket  # websocket-client

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--no-first-run', '--disable-quic', '--disable-dev-shm-usage', '--hide-scrollbars', '--remote-debugging-port=0']
WIDTH, HEIGHT = 1280, 900
NARROW = 800  # the layout is checked at WIDTH and again at this width

class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args): pass

def serve(folder):
    "Serve `folder` on a free port of 127.0.0.1 from a background thread"
    server = ThreadingHTTPServer(('127.0.0.1', 0), partial(QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f'http://127.0.0.1:{server.server_port}/'

class Chromium:
    "Headless Chromium and one tab of it, driven over the DevTools protocol"
    def __init__(self, exe, timeout=60):
        self.profile = Path(tempfile.mkdtemp(prefix='docs-chromium-'))
        self.log = open(self.profile.with_suffix('.log'), 'wb')
        self.proc = subprocess.Popen([exe, *FLAGS, f'--user-data-dir={self.profile}', 'about:blank'],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        port_file, t0 = self.profile/'DevToolsActivePort', time.time()
        while not (port_file.exists() and len(port_file.read_text().split()) == 2):
            if self.proc.poll() is not None or time.time() - t0 > timeout:
                self.close()
                sys.exit(f'chromium did not start; its log:\n{self.profile.with_suffix(".log").read_text()[-3000:]}')
            time.sleep(0.1)
        port, path = port_file.read_text().split()
        try:
            self.ws = websocket.create_connection(f'ws://127.0.0.1:{port}{path}', timeout=timeout, suppress_origin=True)
            self.next_id, self.events, self.session = 0, [], None
            target = self.call('Target.createTarget', url='about:blank')['targetId']
            self.session = self.call('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
            for domain in ('Page', 'Runtime', 'Network', 'Log'): self.call(f'{domain}.enable')
            self.call('Network.setCacheDisabled', cacheDisabled=True)
            self.call('Emulation.setDeviceMetricsOverride', width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close(); raise   # no browser left running behind a failed start

    def _recv(self):
        msg = json.loads(self.ws.recv())
        if 'id' not in msg: self.events.append(msg)
        return msg

    def call(self, method, **params):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params}
        if self.session: msg['sessionId'] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            res = self._recv()
            if res.get('id') == self.next_id:
                if 'error' in res: raise RuntimeError(f'{method}: {res["error"]}')
                return res.get('result', {})

    def eval(self, js):
        res = self.call('Runtime.evaluate', expression=js, awaitPromise=True, returnByValue=True)
        if 'exceptionDetails' in res: raise RuntimeError(f'page script failed: {res["exceptionDetails"]}')
        return res['result'].get('value')

    def open(self, url, timeout=30):
        "Load `url`, wait for its load event, typeset math and fonts, and return the events it caused"
        self.events = []
        self.call('Page.navigate', url=url)
        t0 = time.time()
        while not any(e.get('method') == 'Page.loadEventFired' for e in self.events):
            if time.time() - t0 > timeout: raise TimeoutError(f'{url} did not load in {timeout} s')
            self._recv()
        self.eval("""new Promise(done => { const t0 = Date.now(); const wait = () =>
            (document.documentElement.dataset.math || Date.now() - t0 > 10000) ? document.fonts.ready.then(done)
                                                                                : setTimeout(wait, 25); wait(); })""")
        self.eval('new Promise(done => setTimeout(done, 100))')  # let late events (font or image errors) arrive
        return self.events

    def resize(self, width):
        self.call('Emulation.setDeviceMetricsOverride', width=width, height=HEIGHT, deviceScaleFactor=1, mobile=False)
        self.eval('new Promise(done => setTimeout(done, 200))')  # media queries, resize handlers

    def screenshot(self, path, full_page=False):
        "The first screen at `path`; with `full_page`, the whole page in tiles of at most 16,000 pixels: path, path-2, ..."
        if not full_page:
            Path(path).write_bytes(base64.b64decode(self.call('Page.captureScreenshot', format='png')['data']))
            return [path]
        height, paths, tile = self.eval('document.documentElement.scrollHeight'), [], 16000
        for i, y in enumerate(range(0, height, tile)):
            clip = dict(x=0, y=y, width=WIDTH, height=min(tile, height - y), scale=1)
            data = self.call('Page.captureScreenshot', format='png', captureBeyondViewport=True, clip=clip)['data']
            p = Path(path) if i == 0 else Path(path).with_name(f'{Path(path).stem}-{i + 1}.png')
            p.write_bytes(base64.b64decode(data)); paths.append(p)
        return paths

    def close(self):
        try: self.ws.close()
        except Exception: pass
        self.proc.terminate()
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
        self.profile.with_suffix('.log').unlink(missing_ok=True)

# What a page shows, measured in the page. Math that KaTeX typeset is removed first (its source is kept in
# MathML annotations), and code, which may hold TeX on purpose.
PAGE_FACTS = r"""(() => {
  const main = document.querySelector('main');
  const text = (() => { const c = main.cloneNode(true);
    c.querySelectorAll('pre, code, script, style, .katex').forEach(e => e.remove()); return c.textContent; })();
  const raw = [];
  for (const pat of ['$$', '\\frac', '\\begin{']) { const i = text.indexOf(pat); if (i >= 0) raw.push(text.slice(Math.max(0, i - 40), i + 40)); }
  const inline = text.match(/\$[^$\n]{0,80}\\[A-Za-z]+[^$\n]{0,80}\$/); if (inline) raw.push(inline[0]);
  return {
    title: (document.querySelector('h1') || {}).textContent || '',
    raw_math: raw,
    katex_errors: [...document.querySelectorAll('.katex-error')].map(e => e.textContent.slice(0, 120)),
    n_math: document.querySelectorAll('.katex').length,
    images: [...document.images].map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  };
})()"""

# The page's whole length, one window height at a time: what sticks out of the text column (outside a box that
# scrolls sideways), images not shown, without alt text, or shrunk with no link to them at full size, KaTeX errors.
LAYOUT_CHECK = r"""(async () => {
  const main = document.querySelector('main'), H = innerHeight, doc = document.documentElement, out = [];
  const where = el => { const t = (el.getAttribute('alt') || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
    return `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''} "${t}"`; };
  const inScroller = el => { for (let e = el.parentElement; e && e !== main; e = e.parentElement)
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(e).overflowX)) return true; return false; };
  if (doc.scrollWidth > innerWidth + 1) out.push(`the page scrolls sideways: ${doc.scrollWidth} px wide in a ${innerWidth} px window`);
  const seen = new Set(), els = [...main.querySelectorAll('p, li, h1, h2, h3, h4, pre, table, figure, img, .katex-display, .katex, code, div.output, .cell')];
  let y = 0, steps = 0;
  for (;;) {
    scrollTo(0, y); await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); steps++;
    const right = main.getBoundingClientRect().right, y0 = scrollY;
    for (const el of els) {
      const r = el.getBoundingClientRect(); if (seen.has(el) || r.bottom <= 0 || r.top >= H || r.height === 0) continue;
      seen.add(el); const at = `at y=${Math.round(r.top + y0)}`;
      if (r.right > right + 2 && !inScroller(el)) out.push(`sticks out of the column by ${Math.round(r.right - right)} px ${at}: ${where(el)}`);
      if (el.tagName === 'IMG') {
        if (!(el.complete && el.naturalWidth > 0 && el.clientWidth > 0)) out.push(`image not shown ${at}: ${el.getAttribute('src')}`);
        const alt = (el.getAttribute('alt') || '').trim();
        if (!alt || /^(figure|image|img|png)?\s*\d*$/i.test(alt)) out.push(`image without alt text ${at}: ${el.getAttribute('src')}`);
        const a = el.closest('a[href]');
        if (el.naturalWidth > el.clientWidth * 1.1 && !(a && a.getAttribute('href') === el.getAttribute('src')))
          out.push(`image shrunk to ${el.clientWidth} of ${el.naturalWidth} px with no link to it at full size ${at}: ${el.getAttribute('src')}`);
      }
      if (el.matches('.katex-display') && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'auto')
        out.push(`display math clipped ${at}: ${el.textContent.slice(0, 60)}`);
    }
    if (y0 + H >= doc.scrollHeight - 1) break;
    y = y0 + H;
  }
  const unseen = els.filter(el => !seen.has(el) && el.getClientRects().length && el.getBoundingClientRect().height > 0);
  if (unseen.length) out.push(`${unseen.length} elements never came into view while scrolling (first: ${where(unseen[0])})`);
  out.push(...[...document.querySelectorAll('.katex-error')].map(e => `KaTeX error: ${e.textContent.slice(0, 120)}`));
  scrollTo(0, 0);
  const mainTop = main.getBoundingClientRect().top + scrollY;
  return {problems: [...new Set(out)], steps, height: doc.scrollHeight, main_width: main.clientWidth, main_top: mainTop};
})()"""

def layout_problems(browser, width):
    "The layout problems of the open page at `width` pixels, each naming the width"
    if width != WIDTH: browser.resize(width)
    browser.ws.settimeout(300)  # a long page on a busy machine: one screen at a time takes a while
    try: f = browser.eval(LAYOUT_CHECK)
    finally:
        browser.ws.settimeout(60)
        if width != WIDTH: browser.resize(WIDTH)
    bad = f['problems']
    if f['steps'] * HEIGHT < f['height'] - 1: bad.append(f'scrolled {f["steps"]} screens, short of the page\'s {f["height"]} px')   # the scroll stops within 1 px of the end, as here
    if width == WIDTH and f['main_width'] < 45 * 16: bad.append(f'text column only {f["main_width"]} px wide')
    if width <= NARROW and f['main_top'] > 200: bad.append(f'the text starts {round(f["main_top"])} px down (menus not collapsed?)')
    return [f'at {width} px: {p}' for p in bad], f

def event_problems(events, base):
    "Console errors, exceptions, failed requests and requests leaving the site, from a page's events"
    out, urls = [], {}
    for e in events:
        m, p = e.get('method'), e.get('params', {})
        if m == 'Network.requestWillBeSent':
            urls[p['requestId']] = url = p['request']['url']
            if not url.startswith((base, 'data:', 'about:', 'blob:')): out.append(f'request outside the site: {url}')
        elif m == 'Network.loadingFailed':
            out.append(f'failed request: {urls.get(p["requestId"], "?")} ({p.get("errorText")})')
        elif m == 'Network.responseReceived' and p['response']['status'] >= 400:
            out.append(f'HTTP {p["response"]["status"]}: {p["response"]["url"]}')
        elif m == 'Runtime.consoleAPICalled' and p['type'] in ('error', 'assert'):
            out.append('console error: ' + ' '.join(str(a.get('value', a.get('description', ''))) for a in p['args']))
        elif m == 'Runtime.exceptionThrown':
            d = p['exceptionDetails']
            out.append(f'uncaught exception: {d.get("exception", {}).get("description") or d.get("text")}')
        elif m == 'Log.entryAdded' and p['entry']['level'] == 'error':
            out.append(f'console error: {p["entry"]["text"]} {p["entry"].get("url", "")}'.strip())
    return list(dict.fromkeys(o.splitlines()[0][:300] for o in out))  # first lines: the stacks say little

def expected_pages():
    "The page names nbdev gives the notebooks in nbs/"
    from nbdev.config import get_config
    from nbdev.doclinks import nbglob, _nbpath2html
    cfg = get_config()
    return {_nbpath2html(p).name for p in nbglob(cfg.nbs_path, func=Path) if p.parent == cfg.nbs_path}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--site', default=str(ROOT/'docs'), help='the built site (default: docs/)')
    ap.add_argument('--screenshots', default=str(ROOT/'ci-artifacts'/'screenshots'))
    ap.add_argument('--full-page', action='store_true', help='screenshots of whole pages, not the first screen')
    ap.add_argument('--chromium', default=shutil.which('chromium') or '/usr/bin/chromium')
    args = ap.parse_args()
    site, shots = Path(args.site), Path(args.screenshots)
    pages = sorted(str(p.relative_to(site)) for p in site.rglob('*.html'))
    if not Path(args.chromium).exists(): sys.exit(f'no chromium at {args.chromium}: apt-get install -y chromium')
    if 'index.html' not in pages: sys.exit(f'no index.html in {site}: run python tools/build_docs.py first')
    shots.mkdir(parents=True, exist_ok=True)
    server, base = serve(site)
    def start():
        try: return Chromium(args.chromium)
        except (websocket.WebSocketTimeoutException, TimeoutError) as e:   # its first DevTools calls stalled: one more try
            print(f'chromium: {type(e).__name__} ({e}) while starting; starting it once more', flush=True)
            return Chromium(args.chromium)
    browser = start()
    problems, facts = {p: [] for p in pages}, {}
    t0 = time.time()
    def check(page):
        events = browser.open(base + page)
        f = facts[page] = browser.eval(PAGE_FACTS)
        browser.screenshot(shots/f'{page[:-5].replace("/", "_")}.png', args.full_page)
        bad = problems[page] = []
        for width in (WIDTH, NARROW):
            layout, lf = layout_problems(browser, width)
            bad += layout[:12] + ([f'at {width} px: ... and {len(layout) - 12} more'] if len(layout) > 12 else [])
            f[f'screens_{width}'] = lf['steps']
        bad += event_problems(events, base)
        if not f['title'].strip(): bad.append('no title (h1)')
        bad += [f'raw math left: {s!r}' for s in f['raw_math']]
        bad += [f'KaTeX error: {s!r}' for s in f['katex_errors']]
        bad += [f'image not loaded: {i["src"][:80]}' for i in f['images'] if not i['ok']]
    try:
        for page in pages:
            try: check(page)
            except (websocket.WebSocketTimeoutException, TimeoutError) as e:   # a browser stalled on a busy machine: one more try in a fresh one
                print(f'{page}: {type(e).__name__} ({e}); trying once more in a fresh browser', flush=True)
                browser.close(); browser = start()
                check(page)
    finally:
        browser.close(); server.shutdown()

    n_links = n_outside = 0
    for page, f in facts.items():  # links into the site: the page exists and so does the anchor
        for href in dict.fromkeys(f['links']):
            if not href.startswith(base):
                n_outside += href.startswith('http')
                continue
            n_links += 1
            target, anchor = urldefrag(href)
            path = unquote(target[len(base):]) or 'index.html'
            if path.endswith('/'): path += 'index.html'
            if path in facts:
                if anchor and anchor not in facts[path]['ids']: problems[page].append(f'broken anchor: {path}#{anchor}')
            elif not (site/path).is_file(): problems[page].append(f'broken link: {path}')
    missing = expected_pages() - set(pages)

    for page in pages:
        f = facts.get(page, {})
        status = 'FAIL' if problems[page] else 'ok  '
        print(f'{status} {page:24s} {f.get("n_math", 0):4d} math  {len(f.get("images", [])):3d} images  '
              f'{len(f.get("links", [])):4d} links  {f.get(f"screens_{WIDTH}", 0):3d}+{f.get(f"screens_{NARROW}", 0):3d} screens  '
              f'{f.get("title", "")[:40]}')
        for p in problems[page]: print(f'       - {p}')
    for m in sorted(missing): print(f'FAIL no page for a notebook: {m}')
    n_bad = sum(bool(v) for v in problems.values()) + len(missing)
    print(f'\n{len(pages)} pages, {n_links} links into the site checked ({n_outside} outside links not followed), '
          f'screenshots in {shots}, {time.time() - t0:.1f} s')
    print(f'docs browser test: {"FAILED" if n_bad else "passed"} ({len(pages) - sum(bool(v) for v in problems.values())} '
          f'of {len(pages)} pages clean{f", {len(missing)} notebooks without a page" if missing else ""})')
    sys.exit(1 if n_bad else 0)

if __name__ == '__main__': main()
