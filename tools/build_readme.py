#!/usr/bin/env python
"""Write README.md from nbs/index.ipynb as GitHub markdown, offline (what `nbdev_readme` does through quarto).

The notebook goes through the same nbdev processing as the docs site (hidden cells dropped, `# Title` and
`> summary` read as frontmatter, backticked names linked to the docs), then: the title and summary, markdown
cells as written (links to notebooks pointed at their pages on the docs site, which GitHub can follow from the
README), code cells as ```python blocks followed by their text outputs.

    python tools/build_readme.py            # write README.md
    python tools/build_readme.py --check    # exit 1 if README.md is not what index.ipynb gives
"""
import argparse, re, sys
from pathlib import Path
from urllib.parse import urljoin
from nbdev.config import get_config
from nbdev.doclinks import _nbpath2html
sys.path.insert(0, str(Path(__file__).parent))
from build_docs import process_nb, cell_options, outputs_of, text_of, fence_problems

def output_md(out, opts):
    if out.output_type == 'stream': return f'```\n{text_of(out.text).rstrip()}\n```'
    if out.output_type == 'error': return f'```\n{text_of(out.traceback).rstrip()}\n```'
    data = out.get('data', {})
    if opts.get('output') == 'asis' and 'text/markdown' in data: return text_of(data['text/markdown']).strip()
    if any(m.startswith('image/') for m in data): print('README: an image output is left out (GitHub shows no inline images)')
    if 'text/markdown' in data: return docs_links(text_of(data['text/markdown']).strip())
    if 'text/plain' in data: return f'```\n{text_of(data["text/plain"]).rstrip()}\n```'
    return ''

_re_nb_link = re.compile(r'\]\(([^):\s]+\.ipynb)(#[^)\s]*)?\)')   # ](03_smallnorb.ipynb) or ](03_smallnorb.ipynb#section)

def docs_links(md:str) -> str:
    "Markdown links to notebooks pointed at the notebooks' pages on the docs site"
    cfg = get_config()
    base = urljoin(cfg.doc_host + '/', cfg.doc_baseurl).rstrip('/') + '/'
    return _re_nb_link.sub(lambda m: f'](' + base + _nbpath2html(Path(m[1])).name + (m[2] or '') + ')', md)

def readme_md(nb):
    fm, parts = nb.frontmatter_, []
    parts.append(f'# {fm.get("title", get_config().title)}')
    if fm.get('description'): parts.append(f'> {fm["description"]}')
    for cell in nb.cells:
        if cell.cell_type == 'markdown':
            if bad := fence_problems(cell.source): sys.exit(f"nbs/index.ipynb: a markdown cell's code block: {'; '.join(bad)}")
            parts.append(docs_links(cell.source.strip()))
        if cell.cell_type != 'code': continue
        opts, code = cell_options(cell.source)
        if opts.get('include') == 'false': continue
        if opts.get('echo') != 'false' and code.strip(): parts.append(f'```python\n{code}\n```')
        if opts.get('output') != 'false': parts += [output_md(o, opts) for o in outputs_of(cell)]
    return '\n\n'.join(p for p in parts if p) + '\n'

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true', help='only check that README.md is up to date')
    args = ap.parse_args()
    cfg = get_config()
    readme, md = cfg.config_path/'README.md', readme_md(process_nb(cfg.nbs_path/'index.ipynb'))
    if args.check:
        ok = readme.exists() and readme.read_text(encoding='utf-8') == md
        print('README.md is up to date with nbs/index.ipynb' if ok else
              'README.md differs from what nbs/index.ipynb gives: run python tools/build_readme.py')
        sys.exit(0 if ok else 1)
    readme.write_text(md, encoding='utf-8')
    print(f'wrote {readme}')

if __name__ == '__main__': main()
