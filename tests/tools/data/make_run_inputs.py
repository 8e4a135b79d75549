"""Writes the `wrapir run` CLI tests' programs' inputs (tests/tools/CMakeLists.txt,
"wrapir run"): small safetensors files, committed. Run it from this folder
after changing a case: python3 make_run_inputs.py. No torch needed.

Each file is built by hand (not by the safetensors package) so that the
hostile ones — a name given twice, trailing bytes — can be written at all.
"""
import json
import struct


def write(path, tensors, metadata=None, trailing=b"", header_text=None):
    """tensors: (name, dtype, shape, bytes) in order, stored back to back."""
    header, offset, blob = {}, 0, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blob += data
    text = (header_text or json.dumps(header, separators=(",", ":"))).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob + trailing)


def f32(values):
    return struct.pack(f"<{len(values)}f", *values)


def scalars(**entries):
    return {"scalars": json.dumps(entries)}


# transposed.json: x of sizes [s0, 8], strides [1, s0]; the file holds x's
# logical values 0..31 row-major, dense, as torch writes them.
x = [float(i) for i in range(32)]
write("transposed.safetensors", [("x", "F32", [4, 8], f32(x))], scalars())
write("transposed_i32.safetensors", [("x", "I32", [4, 8], struct.pack("<32i", *range(32)))], scalars())
write("transposed_shape.safetensors", [("x", "F32", [4, 4], f32(x[:16]))], scalars())
write("transposed_missing.safetensors", [("y", "F32", [4, 8], f32(x))], scalars())
# The expected outputs: out0 = x (written dense), out1 = x's storage, which
# the declared strides make column-major: element (i, j) at j*4 + i.
storage = [x[(k % 4) * 8 + k // 4] for k in range(32)]
write("transposed.expected.safetensors", [("out0", "F32", [4, 8], f32(x)), ("out1", "F32", [32], f32(storage))])
# Hostile files: a name given twice (the last was taken), bytes after the data.
write("duplicate_name.safetensors", [], trailing=f32(x), header_text=(
    '{"x":{"dtype":"F32","shape":[4,8],"data_offsets":[0,128]},'
    '"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'))
write("trailing_bytes.safetensors", [("x", "F32", [4, 8], f32(x))], scalars(), trailing=b"\0\0\0\0")

# scalars.json: inputs (s0, s1), graph inputs arg0_1 and arg1_1; outputs (s0, s1).
write("scalars_mixed.safetensors", [], {"scalars": '{"s1": 7, "arg0_1": 3}'})
write("scalars_graph_names.safetensors", [], {"scalars": '{"arg1_1": 7, "arg0_1": 3}'})
write("scalars_positional.safetensors", [], {"scalars": '{"a": 3, "b": 7}'})
write("scalars_unknown.safetensors", [], {"scalars": '{"s0": 3, "x": 7}'})
write("scalars_twice.safetensors", [], {"scalars": '{"s0": 3, "arg0_1": 4, "s1": 7}'})
write("scalars_missing.safetensors", [], {"scalars": '{"s0": 3}'})
write("scalars_count.safetensors", [], {"scalars": '{"a": 3}'})
write("scalars_out_of_range.safetensors", [], {"scalars": '{"s0": 99999999999999999999999, "s1": 7}'})
write("scalars_float.safetensors", [], {"scalars": '{"s0": 2.5, "s1": 7}'})
write("scalars_duplicate_key.safetensors", [], {"scalars": '{"s0": 3, "s1": 7, "s0": 4}'})
