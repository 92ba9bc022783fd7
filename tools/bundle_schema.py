"""Fetch the JSON schema of Databricks Asset Bundles, the one the Databricks CLI validates against.

The CLI embeds `bundle/schema/jsonschema.json` (what `databricks bundle schema` prints). The CLI is a Go module, so the
pinned release comes from the Go module proxy (`$GOPROXY`, default proxy.golang.org), checked against its SHA-256.
Usage: python3 tools/bundle_schema.py OUTPUT
"""

import hashlib
import io
import os
import sys
import urllib.request
import zipfile

CLI_VERSION = "v0.298.0"  # github.com/databricks/cli, 2026-04-22
ZIP_SHA256 = "00283a8aa0de91611557292e9e591fabf6cd8ec2fef4150457b42e60228f6783"


def main(output: str):
    proxy = next(
        (p for p in os.environ.get("GOPROXY", "https://proxy.golang.org").split(",") if p.startswith("http")),
        "https://proxy.golang.org",
    )
    url = f"{proxy.rstrip('/')}/github.com/databricks/cli/@v/{CLI_VERSION}.zip"
    data = urllib.request.urlopen(url, timeout=120).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != ZIP_SHA256:
        sys.exit(f"{url}: SHA-256 {digest}, expected {ZIP_SHA256}")
    schema = zipfile.ZipFile(io.BytesIO(data)).read(
        f"github.com/databricks/cli@{CLI_VERSION}/bundle/schema/jsonschema.json"
    )
    os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
    with open(output, "wb") as f:
        f.write(schema)


if __name__ == "__main__":
    main(sys.argv[1])
