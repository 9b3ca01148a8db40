from idlesteal.kernel import source


def test_parse_control_stanza():
    text = ("Package: linux-source-7.2\nVersion: 7.2.13-1\nSize: 164108840\n"
            "SHA256: 30a8c5fc\nDescription: Linux kernel source\n more text\n")
    f = source.parse_control(text)
    assert f["Version"] == "7.2.13-1" and f["SHA256"] == "30a8c5fc"
    assert f["Description"] == "Linux kernel source\nmore text"


def test_private_apt_config(tmp_path, monkeypatch):
    monkeypatch.setenv("IDLESTEAL_BUILD", str(tmp_path))
    monkeypatch.setenv("IDLESTEAL_DEBIAN_MIRROR", "http://mirror.invalid/debian/")
    conf = source.write_apt_config()
    text = conf.read_text()
    assert conf == tmp_path / "apt" / "apt.conf"
    assert 'Dir::State::status "/dev/null";' in text
    assert 'Acquire::Check-Valid-Until "false";' in text
    assert f'Dir::State::Lists "{tmp_path}/apt/lists";' in text
    sources = (tmp_path / "apt/etc/sources.list").read_text()
    assert sources == ("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                       "http://mirror.invalid/debian sid main\n")


def test_pinned_version_is_default(monkeypatch):
    monkeypatch.delenv("IDLESTEAL_DEB_VERSION", raising=False)
    assert source.wanted_version() == source.PINNED_VERSION == "7.2.13-1"
    assert len(source.PINNED_SHA256) == 64
