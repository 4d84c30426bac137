"""The devices a prediction knows: cube and vector cores, peaks, memory bandwidth, stream budget.

One table, each figure with the document it comes from (:data:`SOURCES`; docs/profile.md "Devices"
prints the same table with URLs and the date each was read). It drives ``--device``'s help and its
error, the replay's core pools (:mod:`.replay`), the estimate's peaks (:mod:`.estimate`) and the
stream budget that ``airctl check`` counts against.

Ascend A2/A3 chips (910B, 910C) have *separate* cube (AIC) and vector (AIV) cores, one cube core
and two vector cores to an AI core (CANN's ``--aicore_num`` takes "cube|vector", e.g. "24|48"):
a matmul and a softmax on two streams do not compete for cores. Older chips (910A, 310P) couple
cube and vector units in one AI core: one pool (``coupled``). A figure no public document gives
is ``None``, and what needs it says so instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from airctl.errors import AirctlError


@dataclass(frozen=True)
class Source:
    title: str
    url: str
    read: str  # the date the figure was read from it


SOURCES = {
    "cann-aicore-num": Source(
        "CANN ATC reference, --aicore_num (CANN 8.5.0): cube|vector core counts of A2/A3 chips, "
        "example 24|48 from the SoC's platform_config",
        "https://www.hiascend.com/document/detail/en/canncommercial/850/devaids/atctool/atlasatcparam_16_0038.html",
        "2026-12-06"),
    "torchair-cores": Source(
        "TorchAir user guide, AI Core/Cube Core/Vector Core (A2: one cube core and a group of vector cores "
        "form an AI core; Atlas training series: cube and vector share one scheduler)",
        "https://www.hiascend.com/document/detail/zh/Pytorch/730/modthirdparty/torchairuseguide/torchair_00156.html",
        "2026-12-06"),
    "catlass-arch": Source(
        "CANN catlass, include/acot/arch/arch.hpp: AscendC910B3 MaxBlock=20, MaxAivBlock=40",
        "https://github.com/hicann/catlass/blob/master/include/acot/arch/arch.hpp", "2026-12-06"),
    "reported-910b": Source(
        "Secondary reports of the 910B's peaks: FP16 about 280-320 TFLOP/s, HBM about 1.2 TB/s "
        "(no Huawei datasheet gives them per SKU)",
        "https://boardor.com/blog/huawei-ascend-910b-outperforms-h20-910c-approaches-h100", "2026-12-06"),
    "vllm-ascend-streams": Source(
        "vllm-ascend utils.py note and issues #1168, #8585: the device has 2048 streams; ACL graph capture "
        "is capped below it (1920, later 1800) to keep a reserve",
        "https://github.com/vllm-project/vllm-ascend/issues/8585", "2026-12-06"),
    "mindcluster-a3": Source(
        "MindCluster, A3 SuperPoD affinity: two Ascend processors (dies) joined by SIO form one module; each "
        "die is one device to the framework",
        "https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/dl_affinity_0040.html",
        "2026-12-06"),
}


@dataclass(frozen=True)
class Device:
    name: str
    cube_cores: int  # AIC cores (the AI cores of a coupled chip)
    vector_cores: int  # AIV cores (0 on a coupled chip: its vector units are in the AI cores)
    tflops_16: float | None  # dense FP16/BF16 cube peak, TFLOP/s (None: no public figure)
    hbm_tb_s: float | None  # HBM bandwidth, TB/s (None: no public figure)
    max_streams: int | None  # streams one device can hold
    max_events: int | None  # events one device can hold (None: no public figure)
    sources: tuple[str, ...]
    note: str
    coupled: bool = False  # cube and vector units share one pool of AI cores

    @property
    def ai_cores(self) -> int:
        """The cube cores: what one cube kernel can spread over."""
        return self.cube_cores

    def pools(self) -> dict[str, int]:
        """Core pools the replay shares: ``{"cube": n, "vector": m}``, or ``{"aicore": n}`` when coupled."""
        if self.coupled:
            return {"aicore": self.cube_cores}
        return {"cube": self.cube_cores, "vector": self.vector_cores}

    def tflops(self, dtype: str | None) -> float:
        """Peak for ``dtype``: FP32 runs at a quarter of FP16 on the cube, INT8 at twice."""
        if self.tflops_16 is None:
            raise AirctlError(f"no public peak figure for {self.name}", hint=_NO_PEAK)
        if dtype in ("float32", "float", "torch.float32"):
            return self.tflops_16 / 4
        if dtype in ("int8", "uint8", "torch.int8"):
            return self.tflops_16 * 2
        return self.tflops_16

    def bandwidth_bytes_s(self) -> float:
        if self.hbm_tb_s is None:
            raise AirctlError(f"no public HBM bandwidth figure for {self.name}", hint=_NO_PEAK)
        return self.hbm_tb_s * 1e12


_NO_PEAK = "give measured times (--times FOLDER or a CSV), or name a device with figures (`--device 910B2`)"

DEVICES = {
    "910B2": Device("910B2", 24, 48, 320.0, 1.2, 2048, None,
                    ("cann-aicore-num", "torchair-cores", "reported-910b", "vllm-ascend-streams"),
                    "Atlas A2 (e.g. Atlas 800T A2): 24 cube + 48 vector cores, 64 GB HBM"),
    "910B3": Device("910B3", 20, 40, 280.0, 1.2, 2048, None,
                    ("catlass-arch", "torchair-cores", "reported-910b", "vllm-ascend-streams"),
                    "Atlas A2: 20 cube + 40 vector cores, 64 GB HBM; peak the low end of the reported range"),
    "910C": Device("910C", 24, 48, 320.0, 1.2, 2048, None,
                   ("cann-aicore-num", "mindcluster-a3", "reported-910b", "vllm-ascend-streams"),
                   "Atlas A3: two 910B-class dies in one package; each die is one device (24 cube + 48 "
                   "vector cores), the figures are per die"),
}
ALIASES = {"910B": "910B3", "A2": "910B2", "A3": "910C", "910B3-A2": "910B3"}
DEFAULT_DEVICE = "910B3"
LEFT_OUT = {  # devices users ask for that the table leaves out, and why
    "910B1": "no public document found that gives its cube and vector core counts",
    "910B4": "its core counts (20 + 40) were found only quoted, without a document to cite",
    "310P": "an inference chip with coupled AI cores and separate vector cores: no public core counts found",
}


def device(name: str | None) -> Device:
    """The device named ``name`` (case-insensitive, ``Ascend`` prefix allowed); the default for None."""
    key = (name or DEFAULT_DEVICE).upper().removeprefix("ASCEND").strip().removeprefix("-").strip()
    key = {k.upper(): v for k, v in ALIASES.items()}.get(key, key)
    for k, d in DEVICES.items():
        if k.upper() == key:
            return d
    why = {k.upper(): v for k, v in LEFT_OUT.items()}.get(key)
    raise AirctlError(f"unknown device {name!r}" + (f" ({why})" if why else ""), hint=f"--device is one of {names()}")


def names() -> str:
    """``910B2, 910B3, 910C`` (aliases: 910B=910B3, …): what ``--device`` takes."""
    aliases = ", ".join(f"{a}={t}" for a, t in ALIASES.items() if a != "910B3-A2")
    return f"{', '.join(DEVICES)} (aliases: {aliases})"


def device_help() -> str:
    """``--device``'s help, from the table."""
    rows = "; ".join(f"{d.name}: {d.cube_cores} cube + {d.vector_cores} vector cores" for d in DEVICES.values())
    return (f"the device to predict for: {names()}; default {DEFAULT_DEVICE}. {rows}. "
            "Sources: docs/profile.md \"Devices\"")
