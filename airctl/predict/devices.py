"""The devices a prediction knows: peak compute, memory bandwidth and AI-core count.

Figures are rounded public specifications (Huawei's product pages and datasheets, and widely
reported figures for the 910C, which is two 910B-class dies in one package); they are what
``--times estimate`` divides by and what ``--device`` gives core sharing. They are labelled an
estimate wherever they are used: a measured profile beats them. docs/profile.md has the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from airctl.errors import AirctlError


@dataclass(frozen=True)
class Device:
    name: str
    tflops_16: float  # dense FP16/BF16 peak of the cube units, TFLOP/s
    hbm_tb_s: float  # HBM bandwidth, TB/s
    ai_cores: int  # cube (AIC) cores one kernel can spread over
    note: str

    def tflops(self, dtype: str | None) -> float:
        """Peak for ``dtype``: FP32 runs at a quarter of FP16 on the cube, INT8 at twice."""
        if dtype in ("float32", "float", "torch.float32"):
            return self.tflops_16 / 4
        if dtype in ("int8", "uint8", "torch.int8"):
            return self.tflops_16 * 2
        return self.tflops_16


DEVICES = {
    "910B": Device("910B", 313.0, 1.6, 20, "Ascend 910B3 (Atlas 800T A2): 313 TFLOP/s FP16, 64 GB HBM2e at 1.6 TB/s, "
                   "20 AI cores"),
    "910B2": Device("910B2", 376.0, 1.6, 24, "Ascend 910B2: 376 TFLOP/s FP16, 64 GB HBM2e at 1.6 TB/s, 24 AI cores"),
    "910C": Device("910C", 752.0, 3.2, 48, "Ascend 910C (two 910B2-class dies, as reported): about 752 TFLOP/s "
                   "FP16, 128 GB HBM at 3.2 TB/s, 48 AI cores"),
}
DEFAULT_DEVICE = "910B"


def device(name: str | None) -> Device:
    """The device named ``name`` (case-insensitive, ``Ascend`` prefix allowed); the default for None."""
    key = (name or DEFAULT_DEVICE).upper().removeprefix("ASCEND").strip()
    for k, d in DEVICES.items():
        if k.upper() == key:
            return d
    raise AirctlError(f"unknown device {name!r}", hint=f"--device is one of {', '.join(DEVICES)}")
