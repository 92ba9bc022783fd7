# Two commands for a fresh machine:  `make demo`  and  `make test`.
# Each sets up what it runs first: Java and Maven from Debian's packages if missing, the pinned Maven artifacts (Hudi's
# Spark bundle, Apache Kafka's broker; for the tests also Hadoop's S3A and the Apicurio schema registry) resolved by Maven
# from the poms in maven/ into .jars/, a virtual environment in .venv with the package, its pinned dependencies and the
# local-only extra (pyspark), and for the tests MinIO built from its Go module (Go from Debian's packages if missing).
VENV    := .venv
PYTHON  := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
JARS    := .jars/hudi/.resolved .jars/kafka/.resolved .jars/hadoop-aws/.resolved .jars/registry/.resolved
# The S3 server the object-store tests and demo run (MinIO, from its Go module: the proxy serves it as pseudo-versions).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO   := .tools/minio/$(MINIO_VERSION)/minio
BUNDLE_SCHEMA := .jars/databricks-bundle/jsonschema.json
SPARK_CDS := .jars/spark-cds/spark.jsa
# Our replacements of classes of Hudi's bundle (java/hudi-fixes/, why in nbs/44_spark.ipynb), first on every local Spark's classpath.
HUDI_FIXES := .jars/hudi-fixes/hudi-fixes.jar
# Our own classes that extend Hudi's (java/hudi-kafka-nb/), loaded beside Hudi's bundle.
SINK_JAR := .jars/hudi-kafka-nb/hudi-kafka-nb.jar
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup demo-setup tools go wheel export lint demo demo-catalog demo-upsert demo-cdc demo-avro demo-object-store test test-notebooks test-pytest test-examples readme jobs benchmark benchmark-peer benchmark-failures benchmark-ingest benchmark-tables benchmark-commit benchmark-shared chaos chaos-tables matrix soak clean

# The parts are made side by side: MinIO's build (minutes of Go compiling) runs while pip and Maven download and the
# class-data archive is written (3 min 43 s on a fresh 2-core machine with every cache cold, 2026-11-25; about 4 minutes
# one after another). Each part's output
# is printed whole when it ends.
setup:
	@$(MAKE) --no-print-directory -j4 --output-sync=target $(INSTALLED) $(JARS) $(HUDI_FIXES) $(SINK_JAR) $(BUNDLE_SCHEMA) $(SPARK_CDS) $(MINIO)

# What a demo runs, and no more: the venv, Hudi's bundle and ours, Kafka's jars, the class-data archive (the Avro demo
# adds the registry, the object-store demo everything). Not MinIO, whose build is most of a fresh setup's time.
DEMO_PARTS := $(INSTALLED) .jars/hudi/.resolved .jars/kafka/.resolved $(HUDI_FIXES) $(SINK_JAR) $(SPARK_CDS)
demo-setup:
	@$(MAKE) --no-print-directory -j4 --output-sync=target $(DEMO_PARTS) $(EXTRA_PARTS)

tools:
	@command -v javac >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1 || { echo "installing Java 17 and Maven from Debian's packages"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	  openjdk-17-jdk-headless maven; }

# Each folder of .jars/ is what Maven resolves from one pom; it is resolved again only when the pom changes.
.jars/%/.resolved: maven/%/pom.xml | tools
	rm -rf .jars/$*
	mvn -B -q -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.jars/$*
	touch $@
# The schema registry (Apicurio) is one zip holding its runner jar and lib/: Maven unpacks it rather than copying jars.
.jars/registry/.resolved: maven/registry/pom.xml | tools
	rm -rf .jars/registry
	mvn -B -q -f $< dependency:unpack-dependencies -DincludeTypes=zip -DoutputDirectory=$(CURDIR)/.jars/registry \
	  -DmarkersDirectory=$(CURDIR)/.jars/registry/.markers
	touch $@
# One Maven at a time: Maven 3.8's local repository (~/.m2) is not safe for two of them downloading at once.
.jars/kafka/.resolved: | .jars/hudi/.resolved
.jars/hadoop-aws/.resolved: | .jars/kafka/.resolved
.jars/registry/.resolved: | .jars/hadoop-aws/.resolved

# MinIO, built from its pinned Go module (about 3 minutes on 2 cores the first time; Go's caches make later builds quick).
# hudi_kafka_nb/dev/s3.py names the same version (MINIO_VERSION) and looks for the binary in its folder.
go:
	@command -v go >/dev/null 2>&1 || { echo "installing Go from Debian's packages (it fetches the toolchain MinIO's module asks for)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends golang-go; }

$(MINIO): | go
	GOBIN=$(CURDIR)/$(dir $(MINIO)) GOTOOLCHAIN=auto GOFLAGS=-trimpath go install github.com/minio/minio@$(MINIO_VERSION)

# The schema the Databricks CLI validates bundles against, from its pinned Go module (tests validate databricks.yml offline).
$(BUNDLE_SCHEMA): tools/bundle_schema.py
	python3 tools/bundle_schema.py $@

# Compiled against the Hadoop that pyspark ships (the classes it replaces are Hadoop streams), for Java 8 and later.
$(HUDI_FIXES): $(shell find java/hudi-fixes -name '*.java') | $(INSTALLED)
	rm -rf $(dir $@) && mkdir -p $(dir $@)classes
	javac --release 8 -nowarn -d $(dir $@)classes \
	  -cp "$$($(PYTHON) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars/*" $^
	jar cf $@ -C $(dir $@)classes .

# Compiled against the Spark that pyspark ships, Hudi's bundle and Hadoop's S3A (the S3 lock), for Java 8 and later.
$(SINK_JAR): $(shell find java/hudi-kafka-nb -name '*.java') .jars/hudi/.resolved .jars/hadoop-aws/.resolved | $(INSTALLED)
	rm -rf $(dir $@) && mkdir -p $(dir $@)classes
	javac --release 8 -nowarn -d $(dir $@)classes \
	  -cp "$$($(PYTHON) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars/*:.jars/hudi/*:.jars/hadoop-aws/*" \
	  $(filter %.java,$^)
	jar cf $@ -C $(dir $@)classes .

# The classes every local Spark loads, kept parsed and verified for the next JVMs (see tools/spark_cds.py): written
# again whenever the venv (pyspark), the Hudi bundle or our fixes of it change.
$(SPARK_CDS): $(INSTALLED) .jars/hudi/.resolved $(HUDI_FIXES) $(SINK_JAR) tools/spark_cds.py
	$(PYTHON) tools/spark_cds.py $@ > .jars/spark-cds.log 2>&1 || { tail -30 .jars/spark-cds.log; exit 1; }

$(INSTALLED): settings.ini setup.py | tools
	@python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "the sink needs Python 3.11 or newer; python3 is $$(python3 -V)"; exit 1; }
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -e ".[dev,local]"
	touch $(INSTALLED)

# The sink's wheel in dist/: the package without the development stack (hudi_kafka_nb.dev), requiring only what the sink
# imports; `pip install dist/hudi_kafka_nb-*.whl[local]` (the local Spark) or `[jobs]` (papermill, for the role notebooks).
wheel: $(INSTALLED) $(HUDI_FIXES) $(SINK_JAR)
	rm -rf build    # setuptools' scratch folder keeps what an earlier build copied into it
	$(PYTHON) -m pip wheel --no-deps --no-build-isolation -q -w dist .

demo: demo-setup
	$(PYTHON) -m hudi_kafka_nb.dev.demo

# The keyed mode: updates of 20,000 orders upserted into a merge-on-read table, compacted by the coordinator.
demo-upsert: demo-setup
	$(PYTHON) -m hudi_kafka_nb.dev.demo --upsert --records 200000 --rate 15000 --workdir runs/demo-upsert

# Change data: Debezium's events of a database of three tables (a snapshot, then creates, updates, deletes with their
# tombstones, some in Kafka transactions), a topic each, mirrored by one sink into a merge-on-read table each by upserts
# and deletes, and each checked against its source table.
demo-cdc: demo-setup
	$(PYTHON) -m hudi_kafka_nb.dev.demo --cdc --records 100000 --rate 10000 --workdir runs/demo-cdc

# Avro orders in Confluent's wire format, their schemas in an embedded schema registry (Apicurio): two schema versions
# written side by side, the table gaining the second one's column mid-stream.
demo-avro:
	@$(MAKE) --no-print-directory demo-setup EXTRA_PARTS=.jars/registry/.resolved
	$(PYTHON) -m hudi_kafka_nb.dev.demo --avro --records 200000 --rate 20000 --workdir runs/demo-avro

# Every table found by name: the demo's orders table registered in an embedded Hive Metastore (Hive's server from
# pyspark's own jars) after each commit, then queried there by name from a Spark of its own.
demo-catalog: demo-setup
	$(PYTHON) -m hudi_kafka_nb.dev.demo --catalog --records 100000 --rate 20000 --workdir runs/demo-catalog

# The same demo as machines that share no disk run it: the table on an embedded S3 server (MinIO), each role's Spark on a
# local standalone cluster (master and two workers); about two minutes.
demo-object-store: setup
	$(PYTHON) -m hudi_kafka_nb.dev.demo --object-store --workdir runs/demo-object-store

# The budget: about 20 minutes of tests on a 2-core machine (setup excluded); the total is printed at the end, and
# pytest prints its ten slowest tests. The tour runs beside the suites (each output shown when it ends): its roles wait
# on the protocol's clocks much of the time, and the suites take what CPU it leaves.
test: setup
	@started=$$(date +%s); $(MAKE) --no-print-directory lint test-notebooks && \
	  $(MAKE) --no-print-directory -j2 --output-sync=target test-pytest test-examples; status=$$?; \
	  $(PYTHON) tools/suite_time.py || true; \
	  echo "make test: $$(( $$(date +%s) - started )) s of tests (setup excluded), exit $$status"; exit $$status

# The linter (ruff, its rules in pyproject.toml) on the exported package, the suites, the benchmarks and the tools; the
# type check (mypy, in pyproject.toml too) on the exported package; and the notebooks as nbdev_clean leaves them (no
# execution counts or metadata in git, outputs only where they document).
lint: setup
	$(VENV)/bin/ruff check hudi_kafka_nb nbs tests benchmarks tools scripts
	$(VENV)/bin/ruff format --check nbs tests benchmarks tools scripts
	$(VENV)/bin/mypy
	@before=$$(cat nbs/*.ipynb | md5sum); $(VENV)/bin/nbdev_clean; after=$$(cat nbs/*.ipynb | md5sum); \
	  [ "$$before" = "$$after" ] || { echo "nbs/ was not as nbdev_clean leaves it (now it is): commit the cleaned notebooks"; exit 1; }

# The package as the notebooks export it, formatted: nbdev writes each module's `__all__`, joins the cells and makes
# the package's imports relative where it can parse them (not those split over lines); ruff makes them all absolute,
# sorts them and formats the result as it formats the notebooks.
export: setup
	$(VENV)/bin/nbdev_export
	$(VENV)/bin/ruff check --quiet --fix --unsafe-fixes --select TID252,I hudi_kafka_nb
	$(VENV)/bin/ruff format --quiet hudi_kafka_nb
	$(PYTHON) tools/render_jobs.py  # the role notebooks' parameters follow SinkConfig's settings and comments

# The package must be exactly what the notebooks export, the README what index.ipynb says,
# and every notebook's inline tests must pass.
test-notebooks: export
	@git diff --quiet -- hudi_kafka_nb 2>/dev/null || { echo "hudi_kafka_nb/ differs from what nbs/ exports: edit the notebooks, run make export, commit"; git diff --stat -- hudi_kafka_nb; exit 1; }
	$(VENV)/bin/nbdev_test --n_workers 2

# Every suite, the slow ones included (a bare `pytest tests` leaves out those marked slow, for a quicker loop), in four
# pytest-xdist workers on two cores: a test's roles wait on the protocol's clocks much of the time, and the other
# workers' tests use that CPU (on 2026-11-28: 26.6 minutes with two workers, 22.1 with three, 20.4 with four, each
# test about 1.5 times as long as with two, well within the waits they allow). Each worker has its own broker; the
# suites that start Jupyter kernels share one worker (xdist_group "papermill"), as kernels started at once may pick one
# port. The tests' folders (their roles' logs) stay in runs/tests and pytest's report in runs/tests.xml until the next
# run: `tools/suite_time.py --per-test` says where the time went.
TEST_WORKERS ?= 4
test-pytest: setup
	mkdir -p runs
	$(PYTHON) -m pytest tests -q -p no:cacheprovider --timeout 900 -m "slow or not slow" --durations 10 -n $(TEST_WORKERS) --dist loadgroup \
	  --basetemp runs/tests --junitxml runs/tests.xml

# The tour's outputs are documentation: nbval runs it on the real stack and compares every output with the one kept
# in the notebook (instant times and paths sanitized). After changing it: run it in Jupyter, nbdev_clean, commit.
test-examples: setup
	$(PYTHON) -m pytest nbs/99_tour.ipynb --nbval --nbval-current-env --nbval-sanitize-with nbs/nbval_sanitize.cfg \
	  --nbval-cell-timeout 900 -q -p no:cacheprovider

readme: setup
	$(PYTHON) tools/render_readme.py > README.md

# The role notebooks' parameters cells and the bundle's job parameters, from SinkConfig and JobControls (tools/render_jobs.py).
jobs: setup
	$(PYTHON) tools/render_jobs.py

# Every figure of benchmarks/throughput.py, our sink and the peer side by side, and where a record's time goes (figure j)
# (about 27 minutes on 2 cores; figure c alone, `ARGS="--parts c"`, about 8).
# Each benchmark takes its script's options in ARGS, e.g. make benchmark-peer ARGS="--records 1000000".
benchmark: setup .jars/spark-kafka/.resolved
	$(PYTHON) benchmarks/throughput.py $(ARGS)

# Our sink against Spark Structured Streaming into Hudi, three rounds: drain rates, latency at a steady rate, memory and
# CPU of every process, a CSV and a plot (about 16 minutes on 2 cores; 25 with --records 1000000).
benchmark-peer: setup .jars/spark-kafka/.resolved
	$(PYTHON) benchmarks/versus_peer.py $(ARGS)

# The same failures for both: 20 SIGKILLs while producing, malformed values, a topic whose earliest offset is not 0
# (about 6 minutes on 2 cores).
benchmark-failures: setup .jars/spark-kafka/.resolved
	$(PYTHON) benchmarks/failures_vs_peer.py $(ARGS)

# Which way into Spark is faster: confluent-kafka → Arrow, or Spark's own Kafka source (needs spark-sql-kafka).
benchmark-ingest: setup .jars/spark-kafka/.resolved
	$(PYTHON) benchmarks/ingest_paths.py $(ARGS)

# One sink of 1, 5 and 20 tables against separate sinks of 1 and 5 (time to commit, commit cycle, memory of each role);
# with ARGS="--stream", a database of 100 tables changing at 1,000 changes a second for 10 minutes through one sink
# (each table's produce → commit latency, idle and streaming CPU, memory: about 25 minutes on 2 cores).
benchmark-tables: setup
	$(PYTHON) benchmarks/many_tables.py $(ARGS)

# What one small commit of one table costs the coordinator, step by step, each way it can write and commit (Hudi's
# Java client, Spark's), in turn in one run (about 7 minutes on 2 cores).
benchmark-commit: setup
	$(PYTHON) benchmarks/commit_cost.py $(ARGS)

# The sink on a table shared with a user's Spark job deleting a batch every 30 s, against the sink alone, in one run:
# committed records a second, commit durations, instants redone (about 10 minutes on 2 cores).
benchmark-shared: setup
	$(PYTHON) benchmarks/shared_table.py $(ARGS)

# The long chaos run (pytest runs a 10-kill one): about 6 minutes on 2 cores.
chaos: setup
	$(PYTHON) scripts/chaos.py --kills 100

# The feature matrix alone (`make test` runs it too): a dozen small sinks, every pair of features met in one, each
# judged by its content; results in runs/matrix/results.json (about 3 minutes on 2 cores).
matrix: setup
	rm -rf runs/matrix && $(PYTHON) -c "from hudi_kafka_nb.dev.matrix import main; main()" runs/matrix $(ARGS)

# The chaos run over one sink of four tables (a topic each), every table judged exactly once on its own.
chaos-tables: setup
	$(PYTHON) scripts/chaos.py --kills 40 --tables 4

# An hour under the supervisor (hudi_kafka_nb/dev/soak.py): the roles, the broker, the S3 server and Spark workers killed
# at random, 500 times or more, while orders stream at half the rate the stack drains; then the table judged. On demand,
# never in CI; e.g. make soak ARGS="--seconds 600 --kills 60" for a short one.
soak: setup
	$(PYTHON) scripts/soak.py $(ARGS)

clean:
	rm -rf runs _docs _proc .jars .tools
