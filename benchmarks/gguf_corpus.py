"""Build the GGUF test corpus (tests/data/gguf/): tiny models with real configs' RoPE settings,
converted by llama.cpp's own converter, and copies with each real-world RoPE mistake injected.

Run it in a separate venv that has llama.cpp's converter requirements (it pins transformers
4.57.x; torch 2.13.0+cpu), with the llama.cpp source tree of llama-cpp-python's sdist:

    python -m venv /tmp/conv && /tmp/conv/bin/pip install torch==2.13.0 transformers==4.57.6 \\
        sentencepiece 'protobuf<5' LLAMA_CPP/gguf-py
    /tmp/conv/bin/python benchmarks/gguf_corpus.py --llama-cpp LLAMA_CPP [--out tests/data/gguf]

Each model: a real config.json from tests/data/hf_configs/ (SOURCES.md) shrunk to a few layers,
two heads, a 16-token vocabulary and an 8-wide MLP, with every RoPE key kept (the head width
too); random weights saved as safetensors; converted with ``convert_hf_to_gguf.py`` in process,
with its tokenizer step replaced by a 16-token stub (no tokenizer files are needed; the RoPE code
is the converter's own). The stored file is the converter's output cut after its metadata and
its RoPE tensors (the weights are never read by the check), and the config the tiny model was
made from is stored beside it. ``manifest.json`` records, per file, the source config, what was
changed, the converter's version, the full and stored sizes, and the injected mistake.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "hf_configs"

#: name -> (source config, layers, changes to the config, a short note)
MODELS = {
    "llama3.1-8b": ("llama3.1-Llama-3.1-8B-Instruct.json", 2, {}, "llama3 rope_freqs, head 128"),
    "llama3.2-1b": ("llama3.2-Llama-3.2-1B-Instruct.json", 2, {}, "llama3 factor 32, head 64"),
    "mistral-7b-v0.3": ("mistral-Mistral-7B-Instruct-v0.3.json", 2, {}, "theta 1e6, no scaling"),
    "qwen2.5-7b": ("qwen2.5-Qwen2.5-7B-Instruct.json", 2, {}, "theta 1e6"),
    "qwen2.5-7b-yarn": (
        "qwen2.5-Qwen2.5-7B-Instruct.json",
        2,
        {
            "rope_scaling": {
                "type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
            },
            "max_position_embeddings": 131072,
        },
        "the YaRN block Qwen2.5's model card tells users to add",
    ),
    "qwen2.5-7b-yarn-untruncated": (
        "qwen2.5-Qwen2.5-7B-Instruct.json",
        2,
        {
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
                "truncate": False,
            },
            "max_position_embeddings": 131072,
        },
        "YaRN with truncate false (as gpt-oss's config), which llama.cpp cannot express",
    ),
    "qwen2.5-7b-yarn-attention-factor": (
        "qwen2.5-Qwen2.5-7B-Instruct.json",
        2,
        {
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
                "attention_factor": 1.0,
            },
            "max_position_embeddings": 131072,
        },
        "YaRN with an explicit attention_factor (a key transformers reads), a variant",
    ),
    "qwen3-8b": ("qwen3-Qwen3-8B.json", 2, {}, "theta 1e6, head 128"),
    "phi3.5-longrope": (
        "phi3.5-Phi-3.5-vision-instruct-text.json",
        2,
        {},
        "LongRoPE long/short factors, original 4096 -> 131072",
    ),
    "gemma3-4b": (
        "gemma3-gemma-3-4b-it.json",
        6,
        {},
        "text_config: sliding 5:1, local base 10000, global 1e6 with linear factor 8",
    ),
    "smollm3-3b": ("smollm3-SmolLM3-3B.json", 8, {}, "every 4th layer without RoPE"),
    "phi-1": ("phi-phi-1.json", 2, {}, "partial rotary 0.5 (phi2 architecture)"),
}

#: name -> (faithful file it is made from, what is done, the key or tensor, a reference)
MISTAKES = {
    "qwen2.5-7b-no-freq-base": (
        "qwen2.5-7b",
        ("remove_key", "qwen2.rope.freq_base"),
        "Qwen1.5 GGUFs without rope.freq_base run at 10,000 instead of 1e6 (ollama #2379)",
    ),
    "mistral-7b-v0.3-no-freq-base": (
        "mistral-7b-v0.3",
        ("remove_key", "llama.rope.freq_base"),
        "CodeLlama GGUFs without theta 1e6 (llama.cpp #2768)",
    ),
    "llama3.1-8b-no-rope-freqs": (
        "llama3.1-8b",
        ("remove_tensor", "rope_freqs.weight"),
        "Llama 3.1 GGUFs without their rope factors degrade past 8,192 tokens (llama.cpp #8650)",
    ),
    "qwen2.5-7b-yarn-ext-factor": (
        "qwen2.5-7b-yarn",
        ("set_float", "qwen2.rope.scaling.yarn_ext_factor", 4.0),
        "yarn_ext_factor set to the factor instead of 1 (ik_llama.cpp #2003, a Laguna GGUF)",
    ),
    "qwen2.5-7b-yarn-no-orig-ctx": (
        "qwen2.5-7b-yarn",
        ("remove_key", "qwen2.rope.scaling.original_context_length"),
        "YaRN without its original context: llama.cpp takes context_length (131072)",
    ),
    "phi3.5-longrope-no-orig-ctx": (
        "phi3.5-longrope",
        ("remove_key", "phi3.rope.scaling.original_context_length"),
        "LongRoPE without its original context: the long factors are never chosen",
    ),
    "gemma3-4b-swapped-bases": (
        "gemma3-4b",
        ("swap_floats", "gemma3.rope.freq_base", "gemma3.rope.freq_base_swa"),
        "Gemma 3 local and global bases mixed up (llama.cpp #14367)",
    ),
    "gemma3-4b-no-scaling-factor": (
        "gemma3-4b",
        ("remove_key", "gemma3.rope.scaling.factor"),
        "Gemma 3's linear factor 8 of the global layers dropped",
    ),
    "phi-1-full-rotary": (
        "phi-1",
        ("set_uint", "phi2.rope.dimension_count", 64),
        "rope.dimension_count = the head width where the config rotates half of it",
    ),
}


def tiny_config(source: str, n_layers: int, changes: dict) -> dict:
    """The real config with its RoPE keys kept and everything else made tiny."""
    config = json.loads((CONFIGS / source).read_text())
    if "text_config" in config:  # a multimodal wrapper: convert its language model
        text = dict(config["text_config"])
        text.setdefault("model_type", "gemma3_text")
        text["architectures"] = ["Gemma3ForCausalLM"]
        config = text
    heads = config.get("num_attention_heads", 8)
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    if config.get("model_type") == "gemma3_text" and "head_dim" not in config:
        head_dim = 256  # Gemma3TextConfig's default, which the 4B's config leaves out
    config.update(changes)
    config["num_hidden_layers"] = n_layers
    config["num_attention_heads"] = 2
    config["num_key_value_heads"] = 1 if config.get("num_key_value_heads", heads) != heads else 2
    if config.get("model_type") == "phi":
        config["num_key_value_heads"] = 2
    config["hidden_size"] = 2 * head_dim
    if "head_dim" in config or config.get("model_type") in ("gemma3_text",):
        config["head_dim"] = head_dim
    config["intermediate_size"] = 8
    config["vocab_size"] = 16
    for key in ("bos_token_id", "eos_token_id"):
        if key in config:
            config[key] = 1
    config["pad_token_id"] = 1  # a class default (Phi-3's 32000) would be outside the vocabulary
    if "no_rope_layers" in config:
        config["no_rope_layers"] = config["no_rope_layers"][:n_layers]
    if "layer_types" in config:
        config["layer_types"] = config["layer_types"][:n_layers]
    config.pop("quantization_config", None)
    config["torch_dtype"] = "float32"
    return config


def make_model(directory: Path, config: dict) -> None:
    import torch
    import transformers

    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps(config, indent=1))
    hf_config = transformers.AutoConfig.from_pretrained(directory)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(hf_config, torch_dtype=torch.float32)
    model.save_pretrained(directory, safe_serialization=True)
    # Gemma's converter counts the vocabulary in tokenizer.json to cut token_embd's rows
    vocab = {f"<t{i}>": i for i in range(config["vocab_size"])}
    (directory / "tokenizer.json").write_text(
        json.dumps({"model": {"vocab": vocab}, "added_tokens": []})
    )
    (directory / "config.json").write_text(json.dumps(config, indent=1))


def convert(llama_cpp: Path, directory: Path, out: Path) -> None:
    sys.path.insert(0, str(llama_cpp))
    sys.path.insert(0, str(llama_cpp / "gguf-py"))
    base = importlib.import_module("conversion.base")

    def stub_vocab(self) -> None:
        tokens = [f"<t{i}>" for i in range(self.hparams.get("vocab_size", 16))]
        self.gguf_writer.add_tokenizer_model("gpt2")
        self.gguf_writer.add_tokenizer_pre("default")
        self.gguf_writer.add_token_list(tokens)
        self.gguf_writer.add_token_types([1] * len(tokens))
        self.gguf_writer.add_token_merges([])

    for holder in (base.ModelBase, *base.ModelBase.__subclasses__()):
        for attribute in list(vars(holder)):
            if attribute.startswith("_set_vocab_") or attribute == "set_vocab":
                setattr(holder, attribute, stub_vocab)
    converter = importlib.import_module("convert_hf_to_gguf")
    choose = converter.get_model_class

    def get_model_class(*args, **kwargs):
        cls = choose(*args, **kwargs)
        for klass in cls.__mro__:
            if "set_vocab" in vars(klass):
                klass.set_vocab = stub_vocab
        return cls

    converter.get_model_class = get_model_class
    argv = sys.argv
    sys.argv = ["convert_hf_to_gguf.py", str(directory), "--outfile", str(out), "--outtype", "f32"]
    try:
        converter.main()
    finally:
        sys.argv = argv


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def rewrite(source: Path, target: Path, action: tuple) -> None:
    """A copy of ``source`` with one metadata key or tensor changed (gguf-py's reader/writer)."""
    import gguf

    reader = gguf.GGUFReader(source)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(target, arch)
    kind = action[0]
    values = {f.name: f.contents() for f in reader.fields.values()}
    for field in reader.fields.values():
        name = field.name
        if name == "general.architecture" or name.startswith("GGUF."):
            continue
        if kind == "remove_key" and name == action[1]:
            continue
        value, value_type = field.contents(), field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        if kind == "set_float" and name == action[1]:
            value = action[2]
        if kind == "set_uint" and name == action[1]:
            value = action[2]
        if kind == "swap_floats" and name in action[1:]:
            other = action[2] if name == action[1] else action[1]
            value = values[other]
        writer.add_key_value(name, value, value_type, sub_type=sub_type)
    if kind == "set_float" and action[1] not in values:
        writer.add_key_value(action[1], action[2], gguf.GGUFValueType.FLOAT32)
    tensors = [t for t in reader.tensors if not (kind == "remove_tensor" and t.name == action[1])]
    for tensor in tensors:
        writer.add_tensor_info(
            tensor.name,
            tensor.data.shape,
            tensor.data.dtype,
            tensor.data.nbytes,
            tensor.tensor_type,
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in tensors:
        writer.write_tensor_data(tensor.data)
    writer.close()


ROPE_TENSORS = ("rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight")


def stored_prefix(path: Path) -> int:
    """Bytes up to the end of the metadata and the RoPE tensors (the rest is weights)."""
    import gguf

    reader = gguf.GGUFReader(path)
    end = reader.data_offset
    for tensor in reader.tensors:
        if tensor.name in ROPE_TENSORS:
            end = max(end, tensor.data_offset + tensor.n_bytes)
    return end


def gguf_reading(path: Path) -> dict:
    """What gguf-py reads from the stored file: the RoPE keys and tensors (for the tests)."""
    import gguf

    reader = gguf.GGUFReader(path)
    keys = {}
    for field in reader.fields.values():
        if ".rope." in field.name or field.name.endswith(
            (
                "context_length",
                "block_count",
                "embedding_length",
                "head_count",
                "key_length",
                "sliding_window",
                "general.architecture",
            )
        ):
            value = field.contents()
            keys[field.name] = value if not isinstance(value, np.generic) else value.item()
    tensors = {
        t.name: [float(v) for v in np.asarray(t.data, dtype=np.float64)]
        for t in reader.tensors
        if t.name in ROPE_TENSORS
    }
    return {"keys": keys, "rope_tensors": tensors, "n_tensors": len(reader.tensors)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-cpp", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "gguf")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    import gguf
    import torch
    import transformers

    changelog = (args.llama_cpp.parents[1] / "PKG-INFO").read_text().split("\n")
    sdist = next((line.split(": ", 1)[1] for line in changelog if line.startswith("Version:")), "?")
    converter = {
        "llama_cpp": "0c1e57098",
        "llama_cpp_python_sdist": sdist,
        "gguf_py": gguf.__version__ if hasattr(gguf, "__version__") else "0.19.0",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest.setdefault("files", {})
    manifest["converter"] = converter
    work = Path(tempfile.mkdtemp(prefix="gguf_corpus_"))
    full: dict[str, Path] = {}
    try:
        for name, (source, n_layers, changes, note) in MODELS.items():
            wanted = (
                args.only is None
                or name in args.only
                or any(MISTAKES[m][0] == name for m in args.only if m in MISTAKES)
            )
            if not wanted:
                continue
            config = tiny_config(source, n_layers, changes)
            directory = work / name
            make_model(directory, config)
            out = work / f"{name}.gguf"
            convert(args.llama_cpp, directory, out)
            full[name] = out
            _store(
                args.out,
                name,
                out,
                config,
                manifest,
                source=source,
                note=note,
                changes=changes,
                mistake=None,
            )
        for name, (origin, action, reference) in MISTAKES.items():
            if args.only is not None and name not in args.only:
                continue
            out = work / f"{name}.gguf"
            rewrite(full[origin], out, action)
            config = json.loads((args.out / f"{origin}.config.json").read_text())
            entry = manifest["files"][f"{origin}.gguf"]
            _store(
                args.out,
                name,
                out,
                config,
                manifest,
                source=entry["source_config"],
                note=entry["note"],
                changes=entry["changes"],
                mistake={"from": f"{origin}.gguf", "action": list(action), "reference": reference},
                config_name=f"{origin}.config.json",
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    manifest["files"] = dict(sorted(manifest["files"].items()))
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"{len(manifest['files'])} files, {total:,} bytes in {args.out}")


#: Files whose gguf-dump output is stored too (the pasted input of the CLI and the tests).
DUMPS = ("llama3.1-8b", "qwen2.5-7b-no-freq-base", "phi3.5-longrope")


def _store(
    out_dir, name, path, config, manifest, *, source, note, changes, mistake, config_name=None
):
    if name in DUMPS:
        import subprocess

        dump = subprocess.run(
            [sys.executable, "-m", "gguf.scripts.gguf_dump", str(path)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (out_dir / f"{name}.dump.txt").write_text(dump)
    prefix = stored_prefix(path)
    data = path.read_bytes()
    (out_dir / f"{name}.gguf").write_bytes(data[:prefix])
    if config_name is None:
        config_name = f"{name}.config.json"
        (out_dir / config_name).write_text(json.dumps(config, indent=1) + "\n")
    manifest["files"][f"{name}.gguf"] = {
        "source_config": f"tests/data/hf_configs/{source}",
        "config": config_name,
        "note": note,
        "changes": changes,
        "full_bytes": len(data),
        "stored_bytes": prefix,
        "converter": "convert_hf_to_gguf.py of " + manifest["converter"]["llama_cpp"],
        "mistake": mistake,
        "gguf_py_reading": gguf_reading(path),
    }


if __name__ == "__main__":
    main()
