"""download_smallnorb against a local HTTP server on 127.0.0.1 serving synthetic files in the exact smallNORB format.

No test here touches the network. The checksum tables are the synthetic files' own MD5s, passed as `checksums`.
"""
import gzip, hashlib
from pathlib import Path
import numpy as np
import pytest
from capsule_routing.downloads import ChecksumError, IncompleteDownloadError, serve_bytes
from capsule_routing.smallnorb import (SMALLNORB_KINDS, download_smallnorb, load_smallnorb, smallnorb_filename,
                                       write_synthetic_smallnorb)

md5 = lambda b: hashlib.md5(b).hexdigest()

@pytest.fixture(scope='module')
def mirror(tmp_path_factory):
    "What a mirror would serve for the synthetic training split: ({name.mat.gz: bytes}, checksums, {kind: raw .mat bytes})"
    src = write_synthetic_smallnorb(tmp_path_factory.mktemp('src'), 'train', n_instances=2, size=16)
    files, sums, raw = {}, {}, {}
    for kind in SMALLNORB_KINDS:
        name = smallnorb_filename('train', kind)
        raw[kind] = (src/name).read_bytes()
        files[name + '.gz'] = gzip.compress(raw[kind], mtime=0)
        sums[name] = (md5(files[name + '.gz']), md5(raw[kind]))
    return files, sums, raw

DAT = smallnorb_filename('train', 'dat')

def listing(folder): return sorted(p.name for p in Path(folder).iterdir())

def test_good_download(mirror, tmp_path):
    files, sums, raw = mirror
    with serve_bytes(files) as (url, log):
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=True)
    for kind in SMALLNORB_KINDS:
        name = smallnorb_filename('train', kind)
        assert (tmp_path/name).read_bytes() == raw[kind]
        assert (tmp_path/(name + '.gz')).read_bytes() == files[name + '.gz']
    assert not any(n.endswith(('.part', '.corrupt')) for n in listing(tmp_path))
    assert [r for _, r in log] == [None]*3  # fresh downloads: no Range requests
    data = load_smallnorb(tmp_path, 'train')
    assert data.images.shape == (40, 2, 16, 16) and data.images.dtype == np.uint8
    assert data.images[3, 1, 5, 7] == np.frombuffer(raw['dat'][24:], np.uint8).reshape(40, 2, 16, 16)[3, 1, 5, 7]
    # a second call finds verified files and fetches nothing
    with serve_bytes(files) as (url, log):
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert log == []

def test_keep_gz_false_removes_only_what_it_downloaded(mirror, tmp_path):
    files, sums, raw = mirror
    cat = smallnorb_filename('train', 'cat')
    (tmp_path/(cat + '.gz')).write_bytes(files[cat + '.gz'])  # the user's own .gz
    with serve_bytes(files) as (url, log):
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, keep_gz=False, show_progress=False)
    assert [n for n, _ in log] == [DAT + '.gz', smallnorb_filename('train', 'info') + '.gz']  # the user's .gz was used
    assert listing(tmp_path) == sorted([DAT, cat, cat + '.gz', smallnorb_filename('train', 'info')])

def test_resume_after_dropped_connection(mirror, tmp_path):
    files, sums, raw = mirror
    with serve_bytes(files, truncate={DAT + '.gz': 3000}) as (url, log):
        with pytest.raises(IncompleteDownloadError, match='received 3,000 of .* the next call resumes'):
            download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
        part = tmp_path/(DAT + '.gz.part')
        assert part.read_bytes() == files[DAT + '.gz'][:3000]
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert log[:2] == [(DAT + '.gz', None), (DAT + '.gz', 'bytes=3000-')]
    assert not part.exists()
    assert (tmp_path/DAT).read_bytes() == raw['dat']

def test_resume_from_existing_part(mirror, tmp_path):
    files, sums, raw = mirror
    whole = files[DAT + '.gz']
    (tmp_path/(DAT + '.gz.part')).write_bytes(whole[:len(whole)//2])
    with serve_bytes(files) as (url, log):
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert log[0] == (DAT + '.gz', f'bytes={len(whole)//2}-')
    assert (tmp_path/DAT).read_bytes() == raw['dat']

def test_complete_part_gets_416_and_is_used(mirror, tmp_path):
    files, sums, raw = mirror
    whole = files[DAT + '.gz']
    (tmp_path/(DAT + '.gz.part')).write_bytes(whole)
    with serve_bytes(files) as (url, log):
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert [entry for entry in log if entry[0] == DAT + '.gz'] == [(DAT + '.gz', f'bytes={len(whole)}-')]   # one request, answered 416: nothing fetched again
    assert (tmp_path/DAT).read_bytes() == raw['dat']

def test_corrupted_download(mirror, tmp_path):
    files, sums, raw = mirror
    bad = bytearray(files[DAT + '.gz']); bad[100] ^= 0xFF
    (tmp_path/'notes.txt').write_text('mine')  # something of the user's in the same folder
    with serve_bytes({**files, DAT + '.gz': bytes(bad)}) as (url, log):
        with pytest.raises(ChecksumError, match=f'MD5 {md5(bytes(bad))} .* differs from the published {sums[DAT][0]}'):
            download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert listing(tmp_path) == sorted(['notes.txt', DAT + '.gz.corrupt'])
    assert (tmp_path/(DAT + '.gz.corrupt')).read_bytes() == bytes(bad)
    assert (tmp_path/'notes.txt').read_text() == 'mine'
    with serve_bytes(files) as (url, log):  # a healthy server afterwards: the next call starts afresh and succeeds
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert log[0] == (DAT + '.gz', None)
    assert (tmp_path/DAT).read_bytes() == raw['dat']

def test_users_corrupted_files_are_kept(mirror, tmp_path):
    files, sums, raw = mirror
    mine = bytearray(raw['dat']); mine[-1] ^= 1
    (tmp_path/DAT).write_bytes(bytes(mine))
    with serve_bytes(files) as (url, log):
        with pytest.raises(ChecksumError, match='left untouched'):
            download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert (tmp_path/DAT).read_bytes() == bytes(mine) and log == []
    # the same for a user's .gz
    (tmp_path/DAT).unlink()
    (tmp_path/(DAT + '.gz')).write_bytes(files[DAT + '.gz'][:-5])
    with serve_bytes(files) as (url, log):
        with pytest.raises(ChecksumError, match='left untouched'):
            download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert (tmp_path/(DAT + '.gz')).read_bytes() == files[DAT + '.gz'][:-5] and log == []
    assert listing(tmp_path) == [DAT + '.gz']

def test_truncated_file_on_server(mirror, tmp_path):
    "A server whose copy is itself truncated (consistent Content-Length): caught by the checksum"
    files, sums, raw = mirror
    with serve_bytes({**files, DAT + '.gz': files[DAT + '.gz'][:-40]}) as (url, log):
        with pytest.raises(ChecksumError):
            download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert not (tmp_path/DAT).exists() and not (tmp_path/(DAT + '.gz')).exists()

def test_wrong_size_or_magic_even_when_checksums_agree(mirror, tmp_path):
    "With a checksum table that matches bad content (a wrong mirror's own table), the format checks still stop it"
    files, sums, raw = mirror
    cases = {'truncated matrix': (gzip.compress(raw['dat'][:-100], mtime=0), 'bytes, its header announces'),
             'wrong magic': (gzip.compress(b'<html>not found</html>' + bytes(100), mtime=0), 'magic number'),
             'truncated gzip': (files[DAT + '.gz'][:-40], 'not a complete gzip file')}
    for i, (case, (gz, message)) in enumerate(cases.items()):
        folder = tmp_path/str(i)
        raw_md5 = md5(gzip.decompress(gz)) if case != 'truncated gzip' else sums[DAT][1]
        with serve_bytes({**files, DAT + '.gz': gz}) as (url, log):
            with pytest.raises(ValueError, match=message):
                download_smallnorb(folder, 'train', base_url=url, checksums={**sums, DAT: (md5(gz), raw_md5)}, show_progress=False)
        assert not (folder/DAT).exists() and not (folder/(DAT + '.part')).exists(), case

def test_published_checksums_are_the_default(mirror, tmp_path):
    files, sums, raw = mirror
    with serve_bytes(files) as (url, log):
        with pytest.raises(ChecksumError, match='66054832f9accfe74a0f4c36a75bc0a2'):  # the published training-dat .gz MD5
            download_smallnorb(tmp_path, 'train', base_url=url, show_progress=False)

def test_missing_file_on_server(mirror, tmp_path):
    files, sums, raw = mirror
    with serve_bytes({}) as (url, log):
        with pytest.raises(IOError, match='HTTP 404'):
            download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    assert listing(tmp_path) == []

def test_two_downloads_into_one_folder_take_turns(mirror, tmp_path, monkeypatch, capsys):
    "Two calls at once (two threads): the second waits for the first's unpacking, then finds each .mat and only verifies it"
    import os, threading, time
    files, sums, raw = mirror
    real_link = os.link
    def slow_link(src, dst):   # a slow disk: a .part stays under its name a while before it is named
        time.sleep(0.2); real_link(src, dst)
    monkeypatch.setattr(os, 'link', slow_link)
    errors = []
    def download():
        try: download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
        except Exception as e: errors.append(e)
    with serve_bytes(files, pause=0.2) as (url, log):
        threads = [threading.Thread(target=download) for _ in range(2)]
        for t in threads: t.start()
        for t in threads: t.join()
    assert errors == []
    for kind in SMALLNORB_KINDS: assert (tmp_path/smallnorb_filename('train', kind)).read_bytes() == raw[kind]
    assert listing(tmp_path) == sorted([*files, *sums])   # no .part, .corrupt or lock file left
    assert sorted(name for name, _ in log) == sorted(files)   # each .gz fetched once
    assert f'waiting for another download of {tmp_path/DAT} ...' in capsys.readouterr().out

def test_mat_checksum_disagreeing_with_gz(mirror, tmp_path):
    "A .gz that matches its MD5 but unpacks to another .mat MD5: the message names the .gz, says the .part was deleted and the .gz kept"
    files, sums, raw = mirror
    with serve_bytes(files) as (url, log):
        with pytest.raises(ChecksumError) as e:
            download_smallnorb(tmp_path, 'train', base_url=url, checksums={**sums, DAT: (sums[DAT][0], '0'*32)}, show_progress=False)
    assert str(e.value).startswith(f"{tmp_path/(DAT + '.gz')} matches its published MD5 but does not unpack to a valid {DAT} "
                                   f"(MD5 {md5(raw['dat'])} differs from the published .mat MD5 {'0'*32}). "
                                   f"The decompressed copy {DAT}.part was deleted and {DAT}.gz was kept.")
    assert 'left untouched' not in str(e.value)
    assert listing(tmp_path) == [DAT + '.gz'] and (tmp_path/(DAT + '.gz')).read_bytes() == files[DAT + '.gz']


def test_mat_on_disk_before_named(mirror, tmp_path, monkeypatch):
    "Each unpacked .mat is fsynced as .mat.part before its rename, and its folder after: after a crash a .mat under its name is whole"
    import os
    files, sums, _ = mirror
    events, real_fsync, real_link = [], os.fsync, os.link
    def fsync(fd): events.append(('fsync', os.readlink(f'/proc/self/fd/{fd}'))); real_fsync(fd)
    def link(src, dst): events.append(('link', str(src), str(dst))); real_link(src, dst)
    monkeypatch.setattr(os, 'fsync', fsync); monkeypatch.setattr(os, 'link', link)
    with serve_bytes(files) as (url, _):
        download_smallnorb(tmp_path, 'train', base_url=url, checksums=sums, show_progress=False)
    for kind in SMALLNORB_KINDS:
        mat = tmp_path/smallnorb_filename('train', kind)
        named = events.index(('link', f'{mat}.part', str(mat)))
        assert ('fsync', f'{mat}.part') in events[:named], (kind, events)
        assert ('fsync', str(tmp_path)) in events[named:], (kind, events)   # the folder, so that the new name is on disk too
