"""Which environment differences make tests/zygote.py start a fresh interpreter instead of forking."""

from __future__ import annotations

from tests.zygote import imports_again


def test_only_variables_read_at_import_need_a_fresh_interpreter() -> None:
    base = {"PATH": "/bin", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    assert imports_again({**base, "TORCH_COMPILE_DEBUG": "1"}, base) == ["TORCH_COMPILE_DEBUG"]
    assert imports_again({**base, "TORCHDYNAMO_VERBOSE": "1"}, base) == ["TORCHDYNAMO_VERBOSE"]
    # torch sets its cache folder in the test process on first use and reads it only then
    assert imports_again({**base, "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor_x"}, base) == []
    assert imports_again({**base, "AIRCTL_OUT": "/tmp/runs", "PATH": "/usr/bin"}, base) == []
