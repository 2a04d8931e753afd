#!/usr/bin/env python3
"""Estimates the compact bytes of each MCP tool entry, read from capabilities/*.yaml.

The entry estimated is the compact tool shape:

    {"name", "title", "description",
     "inputSchema": the manifest's input schema, in its published form, the shared write
                    inputs without their description,
     "outputSchema": {"type": "object", "properties": {<top-level property>: {"type": <its type>}},
                      "required": [...]},
     "annotations": the hints that differ from MCP's defaults (ADR 0007)}

serialized as compact JSON (no spaces, UTF-8 unescaped, as serde_json writes it). Only
manifests that expose an `mcp_tool` are tools. The average is taken over the default toolset:
every tool except the introspection ones (INTROSPECTION below).

The published form of a schema follows codegen/src/project/openapi.rs (`published_schema`): a
type list becomes `anyOf` branches, and a free-form object says `additionalProperties: true`.
The hints and the approval follow model/src/policy.rs.

Usage: scripts/tool-bytes.py [--root DIR] [--json]
  --json  one JSON object per tool instead of the table
"""

import argparse
import glob
import json
import os
import sys

try:
    import yaml
except ImportError:  # pragma: no cover
    sys.exit("tool-bytes: needs PyYAML (pip install --user pyyaml)")

INTROSPECTION = {
    "capabilities.list",
    "capabilities.show",
    "capabilities.projections",
    "contract.digest",
    "mcp.projection",
    "mcp.wire",
    "docs.architecture",
}

ANNOTATIONS = {"title", "description", "default", "examples", "deprecated", "readOnly",
               "writeOnly", "$comment"}
SUBSCHEMA = {"items", "additionalProperties", "not", "contains", "if", "then", "else",
             "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
SUBSCHEMA_LISTS = {"prefixItems", "anyOf", "oneOf", "allOf"}
SUBSCHEMA_MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}
SAYS_PROPERTIES = ("properties", "patternProperties", "additionalProperties",
                   "unevaluatedProperties")


def free_form(schema):
    if schema.get("type") == "object" and not any(k in schema for k in SAYS_PROPERTIES):
        schema["additionalProperties"] = True


def published_schema(schema):
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k in SUBSCHEMA:
            v = published_schema(v)
        elif k in SUBSCHEMA_LISTS and isinstance(v, list):
            v = [published_schema(s) for s in v]
        elif k in SUBSCHEMA_MAPS and isinstance(v, dict):
            v = {name: published_schema(s) for name, s in v.items()}
        out[k] = v
    if isinstance(out.get("type"), list):
        types = out.pop("type")
        constraints = {k: v for k, v in out.items() if k not in ANNOTATIONS}
        for k in constraints:
            del out[k]
        branches = []
        for t in types:
            branch = {"type": t}
            if t != "null":
                branch.update(constraints)
            free_form(branch)
            branches.append(branch)
        out["anyOf"] = branches
    free_form(out)
    return out


def shallow_output(output):
    out = {"type": "object", "properties": {}}
    for name, prop in (output or {}).get("properties", {}).items():
        # A union keeps its type list (["string", "null"]), as model/src and codegen write it.
        out["properties"][name] = {"type": prop["type"]} if "type" in prop else {}
    if "required" in (output or {}):
        out["required"] = output["required"]
    return out


# What MCP tells a client to assume for a hint left out (ToolAnnotations).
MCP_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                "openWorldHint": True}
# The write inputs the server's instructions describe once (SHARED_INPUTS in model/src/toolset.rs).
SHARED_INPUTS = ("dry_run", "idempotency_key", "expected_digest")


def hints(m):
    """The hints a tool entry states: those that differ from MCP's defaults, and for a
    read-only tool not destructiveHint and idempotentHint (meaningful only when it writes)."""
    effect = m["effect"]
    open_world = m.get("determinism") == "client"
    if effect == "read":
        h = {"readOnlyHint": True, "openWorldHint": open_world}
    elif effect == "process_state":
        h = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
             "openWorldHint": open_world}
    else:
        h = {"readOnlyHint": False, "destructiveHint": not m.get("additive", False),
             "idempotentHint": False, "openWorldHint": open_world}
    return {k: v for k, v in h.items() if MCP_DEFAULTS[k] != v}


def input_schema(m):
    schema = published_schema(m.get("input") or {"type": "object"})
    for name in SHARED_INPUTS:
        schema.get("properties", {}).get(name, {}).pop("description", None)
    return schema


def tool_entry(m):
    return {
        "name": m["expose"]["mcp_tool"],
        "title": m["title"],
        "description": m["description"],
        "inputSchema": input_schema(m),
        "outputSchema": shallow_output(m.get("output")),
        "annotations": hints(m),
    }


def compact(v):
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    rows = []
    for path in sorted(glob.glob(os.path.join(args.root, "capabilities", "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            m = yaml.safe_load(f)
        if not (m.get("expose") or {}).get("mcp_tool"):
            continue
        entry = tool_entry(m)
        rows.append({
            "id": m["id"],
            "tool": entry["name"],
            "bytes": compact(entry),
            "description": len(m["description"]),
            "input": compact(entry["inputSchema"]),
            "default": m["id"] not in INTROSPECTION,
        })
    rows.sort(key=lambda r: (-r["bytes"], r["tool"]))

    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print(f"{'bytes':>6} {'descr':>5} {'input':>5}  tool")
        for r in rows:
            mark = "" if r["default"] else "  (introspection)"
            print(f"{r['bytes']:>6} {r['description']:>5} {r['input']:>5}  {r['tool']}{mark}")
    default = [r for r in rows if r["default"]]
    total = sum(r["bytes"] for r in rows)
    dtotal = sum(r["bytes"] for r in default)
    print(f"all tools: {len(rows)}, {total} bytes, average {total / max(len(rows), 1):.0f}",
          file=sys.stderr if args.json else sys.stdout)
    print(f"default toolset: {len(default)} tools, {dtotal} bytes, "
          f"average {dtotal / max(len(default), 1):.0f}, "
          f"largest {max((r['bytes'] for r in default), default=0)}",
          file=sys.stderr if args.json else sys.stdout)


if __name__ == "__main__":
    main()
