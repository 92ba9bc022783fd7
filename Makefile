# Two commands for a fresh machine:  `make demo`  and  `make test`.
# Both set everything up first: Java from Debian's packages if missing (Spark needs it), a virtual
# environment in .venv with the package and its pinned dependencies from PyPI.
VENV    := .venv
PYTHON  := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: setup demo test test-notebooks test-pytest readme benchmark chaos clean

setup: $(INSTALLED)

$(INSTALLED): settings.ini setup.py
	@command -v java >/dev/null 2>&1 || { echo "installing Java (openjdk-17-jre-headless) for Spark"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get update -q && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openjdk-17-jre-headless; }
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -e ".[dev]"
	touch $(INSTALLED)

demo: setup
	$(VENV)/bin/hudi-kafka-nb demo

test: setup
	$(MAKE) --no-print-directory test-notebooks test-pytest

# The package must be exactly what the notebooks export, the README what index.ipynb says,
# and every notebook's inline tests must pass.
test-notebooks: setup
	$(VENV)/bin/nbdev_export
	@git diff --quiet -- hudi_kafka_nb 2>/dev/null || { echo "hudi_kafka_nb/ differs from what nbs/ exports: edit the notebooks, run nbdev_export, commit"; git diff --stat -- hudi_kafka_nb; exit 1; }
	$(VENV)/bin/nbdev_test --n_workers 2

test-pytest: setup
	$(PYTHON) -m pytest tests -q -p no:cacheprovider

readme: setup
	$(PYTHON) tools/render_readme.py > README.md

benchmark: setup
	$(PYTHON) benchmarks/throughput.py

# The long chaos run (pytest runs a 15-kill one): about 6 minutes on 2 cores.
chaos: setup
	$(PYTHON) scripts/chaos.py --kills 100

clean:
	rm -rf runs _docs _proc
