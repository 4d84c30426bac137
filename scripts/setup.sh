#!/usr/bin/env bash
# Set up a fresh machine for airctl: Debian packages (graphviz for `dot`, chromium for the
# report tests), a virtual environment in .venv, and airctl with its pinned dependencies
# (torch==2.13.0 CPU wheel, torch-npu==2.13.0, which bundles TorchAir).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  echo "setup: apt-get install ${need_apt[*]}" >&2
  $SUDO apt-get update -q >/dev/null
  $SUDO apt-get install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
echo "setup: pip install -e .[test] (torch==2.13.0, torch-npu==2.13.0, ...)" >&2
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
# Model Explorer's own graph dataclasses check `airctl dump --type model-explorer` (tests/io/test_model_explorer.py):
# its package alone (2 MB), without the server and the ~480 MB adapter wheel it depends on (docs/dependencies.md)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "ai-edge-model-explorer==0.1.34" "dacite==1.9.2"
# An editable install leaves airctl's own modules uncompiled, and where PYTHONDONTWRITEBYTECODE is set
# (as on this project's machines) every new airctl process would compile them again: 0.6 s of an 11 s
# `airctl compile` (docs/performance.md). Python still checks each .pyc against its source.
.venv/bin/python -m compileall -q airctl >/dev/null
TORCH_DEVICE_BACKEND_AUTOLOAD=0 .venv/bin/python -c "
import importlib.util, torch, airctl, yaml, google.protobuf, graphviz
assert torch.__version__.startswith('2.13.0'), torch.__version__
assert importlib.util.find_spec('torch_npu') is not None, 'torch-npu missing'
print('setup: ok (torch', torch.__version__ + ')')"
