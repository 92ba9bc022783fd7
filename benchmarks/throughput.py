"""Throughput benchmark: run on demand (`make benchmark`), never as a test.

In one run on the embedded Apache Kafka broker it measures (a) the raw rate of a confluent-kafka consumer reading the
records with the sink's fetch settings, (b) the sink's committed-records rate with 1 and 2 participants (real role
notebooks under papermill), (c) the keyed mode (upsert into merge-on-read, compaction every 3 delta commits): rows
staged for the coordinator's write, then by bucket index (each participant writes its own) with the table services run
by the coordinator inside its commits, then by a table-services job beside it; then the peer (f) upserting the same
events, by Hudi's default index and by the same bucket index (by default at the scale issue 34 measured: 400,000 events
of 50,000 orders, 100,000 a commit; `--keyed-records 150000 --keyed-orders 20000 --keyed-per-commit 20000` for small
instants), (d) an appending sink with and without the table-services job beside it, (e) the sink with 2 participants and
the table on an embedded S3 server (MinIO, S3A) against (b)'s local table, (f) the peer a user would pick instead: Spark
Structured Streaming's Kafka source into Hudi's streaming sink (benchmarks/peer.py), at (b)'s records per commit with 1
and 2 participants and in one micro-batch, its table checked like ours, (g) a participant's peak memory draining a
backlog and one four times larger, with instants of any size (no record limit, a 10 s commit interval) at one memory
budget (`max_buffered_bytes`), (h) two ways to overlap reading with Hudi's writing at the same records per commit:
reading the next instant ahead while Hudi writes the last one (the default), and writing into the open instant as rows
arrive (a small budget), (i) the same events as JSON, as Avro, as JSON with a JSON Schema and as Protobuf in Confluent's
wire format (schemas in an embedded Apicurio registry): the participant's decode rate of each, and the sink's committed
rate with each (1 participant), (k) the committed rate with a transform of five computed columns against none, (j)
where the time goes (benchmarks/breakdown.py), at large instants: the sink's steady
rate with 1 and 2 participants and its roles' CPU, the same backlog through the sink's stages in turn in one process
(each stage's wall and CPU seconds), and Hudi's row writer alone on the same rows; then each record's produce → commit
latency at a steady rate (half the 2 participants' steady rate, or --steady-rate), our sink (1 and 2 participants)
against the peer (f), and prints both and their ratio, the commit latency (END_COMMIT → ACK_COMMIT, from the
coordinator's log) and the peak memory of a participant's process tree (papermill, kernel, Spark JVM with Hudi; shared
pages once). Everything is compared within the run, as ratios: these machines are too noisy for absolute targets.
Participants that run together get their share of the cores each (`dev.roles.participant_roles`), as any sharing one
machine should."""

import argparse
import statistics
import tempfile
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

# benchmarks/breakdown.py: figure (j)
from breakdown import plot_breakdown, print_breakdown, stage_breakdown, tree_cpu_s

# benchmarks/versus_peer.py: the raw consumer, the peer, latency
from versus_peer import latencies, raw_read, run_peer, run_sink

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.demo import wait_until_committed, wait_until_ingesting
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import UPSERT_SETTINGS, latest_per_key, produce_orders
from hudi_kafka_nb.dev.registry import EmbeddedRegistry
from hudi_kafka_nb.dev.roles import RoleProcess, participant_roles
from hudi_kafka_nb.dev.s3 import EmbeddedS3
from hudi_kafka_nb.dev.summary import compare_latest
from hudi_kafka_nb.formats.records import decode_records
from hudi_kafka_nb.formats.transform import transform_rows
from hudi_kafka_nb.table.reading import coordinate_check
from hudi_kafka_nb.table.storage import TableStorage, resolve_storage_options


def log_time(line: str) -> float:
    "When a role's log line was written (its leading timestamp), as seconds since the epoch."
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def commit_latencies(log_path):
    """Seconds from each END_COMMIT (state COLLECTING) to the commit that followed it."""
    latencies, collecting = [], None
    for line in Path(log_path).read_text().splitlines():
        if "state=COLLECTING" in line:
            collecting = log_time(line)
        elif " committed=" in line and collecting is not None:
            latencies.append(log_time(line) - collecting)
            collecting = None
    return latencies


def sink_rate(
    broker,
    topic,
    ends,
    participants,
    commit_interval_s,
    max_buffered,
    workdir,
    settings=None,
    table_services=False,
    cpu: dict | None = None,
    role_env: dict | None = None,
):
    """Committed records per second draining the topic's backlog, plus latencies and peak participant memory; `cpu`, if
    given, gets each role's and the broker's CPU seconds over the drain (from the first commit to the last); `role_env`:
    environment variables of a role by its role name (e.g. its JVM's options)."""
    params = {
        **(settings or {}),
        "bootstrap_servers": broker.bootstrap_servers,
        "topics": topic,
        "table_path": str(workdir / "table"),
        "table_name": "bench",
        "partition_field": "region",
        "commit_interval_s": commit_interval_s,
        "write_timeout_s": 300.0,
        "value_schema": DEMO_VALUE_SCHEMA,
        "min_participants": participants,
        "max_buffered_records": max_buffered,
        "control_topic": f"control-{uuid.uuid4().hex[:6]}",
        **(settings or {}),
    }
    # this process reads the table too, with the roles' store settings
    table = TableStorage(params["table_path"], resolve_storage_options(params.get("storage_options", {})))
    env = role_env or {}
    roles = [RoleProcess("coordinator", params, workdir, env=env.get("coordinator"))]
    roles += participant_roles(params, participants, workdir, env=env.get("participant"))
    if table_services:
        roles.append(
            RoleProcess("table_services", {**params, "table_services_interval_s": 5.0}, workdir, name="table-services")
        )
    participants_of = [r for r in roles if r.role == "participant"]
    peak, stop = {r.name: 0 for r in participants_of}, threading.Event()

    def sample_memory():
        while not stop.is_set():
            for r in participants_of:
                peak[r.name] = max(peak[r.name], r.memory_bytes())
            time.sleep(0.2)

    try:
        for r in roles:
            r.start()
        threading.Thread(target=sample_memory, daemon=True).start()
        wait_until_ingesting(table, roles, timeout_s=300)
        cpu_before = roles_cpu(roles, broker)
        started = time.perf_counter()
        wait_until_committed(table, ends, roles, timeout_s=1800)
        elapsed = time.perf_counter() - started
        if cpu is not None:
            cpu.update(
                {
                    name: {
                        "cpu_s": total - cpu_before.get(name, (0.0, 0.0))[0],
                        "jvm_s": jvm - cpu_before.get(name, (0.0, 0.0))[1],
                    }
                    for name, (total, jvm) in roles_cpu(roles, broker).items()
                }
            )
    finally:
        stop.set()
        for r in roles:
            r.stop()
    if settings and settings.get("write_operation") == "upsert":
        check = compare_latest(table, latest_per_key(broker.bootstrap_servers, topic, ends))
        assert check["rows"] == check["keys"] and not check["duplicate_keys"] and not check["stale_rows"], check
    else:
        check = coordinate_check(table)
        assert check["rows"] == sum(ends.values()) and check["duplicates"] == 0, check
    return sum(ends.values()) / elapsed, commit_latencies(roles[0].log_path), max(peak.values())


def roles_cpu(roles, broker) -> dict[str, tuple[float, float]]:
    "CPU seconds so far of each role's process tree (papermill, kernel, Spark JVM) and its JVM's, and of the broker."
    return {
        **{r.name: (tree_cpu_s(r.process.pid), tree_cpu_s(r.process.pid, "JVM")) for r in roles if r.process},
        "broker": (tree_cpu_s(broker.process.pid),) * 2,
    }


def breakdown_figure(broker, args, root, role_env: dict | None = None):
    """(j) Where the time goes, at `--breakdown-per-instant` records per commit: the sink with 1 participant and with 2
    (half as many each), every instant ended by full participants; each role's CPU over the drain; the same backlog
    through the sink's stages in turn in one process; Hudi's writer alone on the same rows (benchmarks/breakdown.py)."""
    topic, per_instant = f"bench-breakdown-{uuid.uuid4().hex[:6]}", args.breakdown_per_instant
    create_topic(broker.bootstrap_servers, topic, 8)
    print(f"producing {args.breakdown_records:,} order events to 8 partitions …")
    ends = produce_orders(broker.bootstrap_servers, topic, args.breakdown_records, progress=False)
    rates, usage = {}, {}
    for participants in (1, 2):
        usage[participants], workdir = {}, root / f"breakdown-p{participants}"
        # a long interval: every instant but the last ends because its participants are full, so all are the same size
        sink_rate(
            broker,
            topic,
            ends,
            participants,
            60.0,
            per_instant // participants,
            workdir,
            cpu=usage[participants],
            role_env=role_env,
        )
        rates[participants] = steady_commit_rate(workdir / "coordinator.log")
    result = stage_breakdown(broker, topic, ends, per_instant, root / "breakdown")
    print_breakdown(result, rates, usage, per_instant)
    plot_breakdown(result, rates, root / "breakdown.png")
    print(f"(j) plot: {root / 'breakdown.png'}")
    # each record's produce → commit latency at one steady rate (`--steady-rate`, else half the two participants' drain
    # rate), ours with 1 and 2 participants, then the peer's. Our instants are capped as in the drains above (else, at
    # `--max-buffered`, the sink's capacity is about the steady rate itself, and the backlog its cold first instant
    # leaves never drains), and still end by the commit interval
    steady, spans = args.steady_rate or rates[2] / 2, {}
    for name, run in (
        ("our sink, 1 participant", lambda t, w: run_sink(broker, t, {}, 1, w, args, steady, per_instant)),
        ("our sink, 2 participants", lambda t, w: run_sink(broker, t, {}, 2, w, args, steady, per_instant // 2)),
        ("the peer", lambda t, w: run_peer(broker, t, {}, 0, w, args, steady)),
    ):
        steady_topic = f"bench-steady-{uuid.uuid4().hex[:6]}"
        create_topic(broker.bootstrap_servers, steady_topic, 8)
        spans[name] = latencies(run(steady_topic, root / f"steady-{name.split()[-1]}")[2])
    print(
        f"(j) produce → commit latency at {steady:,.0f} records/s for {args.steady_s:.0f} s, median (p95): "
        + "; ".join(f"{name} {median:.1f} s ({p95:.1f} s)" for name, (median, p95) in spans.items())
        + "; ours / the peer's median: "
        + ", ".join(
            f"{n} participant(s) {spans[name][0] / spans['the peer'][0]:.2f}x"
            for n, name in ((1, "our sink, 1 participant"), (2, "our sink, 2 participants"))
        )
        + " (target at most 1.00x)"
    )


def keyed_figure(broker, args, root):
    """(c) upserts of `--keyed-orders` orders into merge-on-read: staged for the coordinator's write (table services
    inline), then by bucket index, each participant writing its own (table services inline, then a table-services job
    beside it); then the peer (f) upserting the same events, by Hudi's default index and by the same bucket index."""
    keyed_topic = f"bench-keyed-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap_servers, keyed_topic, 8)
    keyed_ends = produce_orders(
        broker.bootstrap_servers, keyed_topic, args.keyed_records, progress=False, orders=args.keyed_orders
    )
    # compactions every few commits: at the scale (400,000 events of 50,000 orders, 100,000 a commit) one in
    # the drain; with small instants (150,000 of 20,000, 20,000 a commit) two
    compaction = {"hoodie.compact.inline.max.delta.commits": "3"}
    # one bucket per region: as many file groups as Hudi's default index makes of these orders (one per region, far
    # below its small-file limit)
    bucket_index = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
    keyed = {**UPSERT_SETTINGS, "hudi_options": compaction, "max_batch_records": 5_000}
    runs = {
        "staged, services inline": ({**keyed, "table_services": "inline"}, False),
        "by bucket, services inline": (
            {**keyed, "hudi_options": {**compaction, **bucket_index}, "table_services": "inline"},
            False,
        ),
        "by bucket, services beside": (
            {**keyed, "hudi_options": {**compaction, **bucket_index}, "table_services": "separate"},
            True,
        ),
    }
    medians, rates = {}, {}
    for name, (settings, beside) in runs.items():
        rate, latencies, _ = sink_rate(
            broker,
            keyed_topic,
            keyed_ends,
            2,
            args.commit_interval,
            args.keyed_per_commit // 2,
            root / f"keyed-{name.replace(', ', '-').replace(' ', '_')}",
            settings=settings,
            table_services=beside,
        )
        medians[name], rates[name] = statistics.median(latencies), rate
        print(
            f"(c) upsert, merge-on-read, {name}: {rate:,.0f} events/s; commit latency median {medians[name]:.2f}s max "
            f"{max(latencies):.2f}s over {len(latencies)} commits"
        )
    print(
        "(c) by bucket / staged (services inline): "
        f"{rates['by bucket, services inline'] / rates['staged, services inline']:.2f}x; commit latency with the "
        "table-services job beside the sink / without (by bucket): "
        f"{medians['by bucket, services beside'] / medians['by bucket, services inline']:.2f}"
    )
    # the peer (f) upserting the same events by the same key into merge-on-read, compacted as often, as many a
    # micro-batch as our commits take (half from each participant), its table checked like ours: by Hudi's default index
    # (what a user of the peer gets), and by the same bucket index as ours
    keyed_options = {
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "order_id",
        "hoodie.table.ordering.fields": "event_time",
        "hoodie.datasource.write.precombine.field": "event_time",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.compact.inline": "true",
        **compaction,
    }
    expected = latest_per_key(broker.bootstrap_servers, keyed_topic, keyed_ends)

    def latest_checked(table):
        check = compare_latest(table, expected)
        assert check["rows"] == check["keys"] and not check["duplicate_keys"] and not check["stale_rows"], check

    peer_rates = {}
    for index, options in {"default index": keyed_options, "bucket index": {**keyed_options, **bucket_index}}.items():
        seconds, _, _ = run_peer(
            broker,
            keyed_topic,
            keyed_ends,
            args.keyed_per_commit,
            root / f"keyed-peer-{index.replace(' ', '-')}",
            args,
            hudi_options=options,
            check=latest_checked,
        )
        peer_rates[index] = sum(keyed_ends.values()) / seconds
        print(
            f"(c) the peer upserting the same events by {index}, {args.keyed_per_commit:,} a micro-batch: "
            f"{peer_rates[index]:,.0f} events/s"
        )
    print(
        "(c) ours by bucket (services inline) / the peer by its default index: "
        f"{rates['by bucket, services inline'] / peer_rates['default index']:.2f}x (target at least 1.50x); / the peer "
        f"by bucket index: {rates['by bucket, services inline'] / peer_rates['bucket index']:.2f}x; ours staged / the "
        f"peer by its default index: {rates['staged, services inline'] / peer_rates['default index']:.2f}x"
    )


def table_services_figure(broker, topic, ends, args, root):
    """(d) the appending sink with its services inline (cleaning, archival in the coordinator) and beside it in their
    own job (plus clustering)."""
    medians = {}
    for where in ("inline", "separate"):
        settings = {
            "table_services": where,
            **({"clustering_sort_columns": "event_time"} if where == "separate" else {}),
        }
        rate, latencies, _ = sink_rate(
            broker,
            topic,
            ends,
            2,
            args.commit_interval,
            args.max_buffered,
            root / f"services-{where}",
            settings=settings,
            table_services=where == "separate",
        )
        medians[where] = statistics.median(latencies)
        print(
            f"(d) bulk insert, 2 participants, table services {where}: {rate:,.0f} committed records/s; commit latency "
            f"median {medians[where]:.2f}s max {max(latencies):.2f}s over {len(latencies)} commits"
        )
    print(
        "(d) commit latency with the table-services job beside the sink / without: "
        f"{medians['separate'] / medians['inline']:.2f}"
    )


def object_store_figure(broker, topic, ends, args, root, local_rate):
    """(e) The same sink (2 participants) with its table in MinIO's bucket, written through S3A, read back with
    hudi-rs."""
    with EmbeddedS3(root / "s3") as s3:
        settings = {"table_path": s3.url("bench"), "storage_options": s3.storage_options}
        rate, latencies, _ = sink_rate(
            broker, topic, ends, 2, args.commit_interval, args.max_buffered, root / "s3-sink", settings
        )
    print(
        f"(e) sink, 2 participants, table on MinIO (S3A): {rate:,.0f} committed records/s = {rate / local_rate:.2f}x "
        f"the local table's (b); commit latency median {statistics.median(latencies):.2f}s max {max(latencies):.2f}s "
        f"over {len(latencies)} commits"
    )


def memory_figure(broker, args, root):
    """(g) One participant drains `--memory-records` events, then four times as many, each in instants as large as a 10
    s commit interval makes them (`max_buffered_records` above the backlog), at a budget of `--memory-budget-mib`: past
    it a participant writes its rows into the open instant at once. Its peak memory should not grow with the backlog."""
    peaks = {}
    for records in (args.memory_records, 4 * args.memory_records):
        topic = f"bench-memory-{uuid.uuid4().hex[:6]}"
        create_topic(broker.bootstrap_servers, topic, 8)
        print(f"producing {records:,} order events to 8 partitions …")
        ends = produce_orders(broker.bootstrap_servers, topic, records, progress=False)
        rate, latencies, peaks[records] = sink_rate(
            broker,
            topic,
            ends,
            1,
            10.0,
            2 * records,
            root / f"memory-{records}",
            settings={"max_buffered_bytes": args.memory_budget_mib * 2**20},
        )
        print(
            f"(g) sink, 1 participant, {records:,} events, instants of any size, max_buffered_bytes "
            f"{args.memory_budget_mib} MiB: {rate:,.0f} committed records/s over {len(latencies)} commits; peak "
            f"participant memory {peaks[records] / 2**20:,.0f} MiB"
        )
    low, high = args.memory_records, 4 * args.memory_records
    print(f"(g) peak participant memory, {high:,} events / {low:,}: {peaks[high] / peaks[low]:.2f}")


def steady_commit_rate(log_path) -> float:
    """Records per second from the first commit to the last full one: a drain's steady state, without its cold first
    instant and its partial last."""
    commits = [
        (log_time(line), int(line.rsplit(" records=", 1)[1].split()[0]))
        for line in Path(log_path).read_text().splitlines()
        if " committed=" in line and " records=" in line
    ]
    if len(commits) < 3:
        raise SystemExit(f"{log_path}: {len(commits)} commits, too few for a steady state: produce more records")
    return sum(n for _, n in commits[1:-1]) / (commits[-2][0] - commits[0][0])


def overlap_figure(broker, args, root):
    """(h) Two ways to overlap reading Kafka with Hudi's writing, at the same records per commit (one participant,
    `--overlap-per-instant` records an instant, ended by a full buffer): reading the next instant's records while Hudi
    writes the whole instant after END_COMMIT (the default budget), and writing into the open instant as the rows arrive
    (a small `max_buffered_bytes`). The steady rate between the first and the last full commit, from the coordinator's
    log."""
    topic = f"bench-overlap-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap_servers, topic, 8)
    ends = produce_orders(broker.bootstrap_servers, topic, args.memory_records, progress=False)
    rates = {}
    for name, mib in (
        ("read ahead, write the instant at END_COMMIT", 128),
        ("write into the open instant as rows arrive", 8),
    ):
        # a long interval: every instant but the last ends because its participant is full, so all are the same size
        sink_rate(
            broker,
            topic,
            ends,
            1,
            20.0,
            args.overlap_per_instant,
            root / f"overlap-{mib}",
            settings={"max_buffered_bytes": mib * 2**20},
        )
        rates[mib] = steady_commit_rate(root / f"overlap-{mib}" / "coordinator.log")
        print(
            f"(h) sink, 1 participant, {args.overlap_per_instant:,} records an instant, {name} (max_buffered_bytes "
            f"{mib} MiB): {rates[mib]:,.0f} committed records/s in the steady state"
        )
    print(f"(h) reading ahead / writing as rows arrive: {rates[128] / rates[8]:.2f}")


# (k): five columns computed on the way in, the kind of transform users write (`transform`)
FIVE_COLUMNS = """
    SELECT *, upper(customer_id) AS customer, amount * quantity AS total, date_format(event_time, 'yyyy-MM-dd') AS day,
           concat(region, '/', status) AS region_status, hour(event_time) AS event_hour
    FROM <SRC>"""


def transform_figure(broker, topic, ends, args, root):
    """(k) The sink's committed rate (2 participants) with a transform of five computed columns against none, on the
    same backlog, in rounds of none, with, with, none so that a drift of the machine weighs on both alike; the ratio of
    their medians (the target: at least 0.9). Then what the transform costs a participant in CPU per record, against
    decoding, on batches of the same records in this process (steadier than the drains on a shared machine)."""
    rates: dict[str, list[float]] = {"none": [], "transform": []}
    for i, kind in enumerate(("none", "transform", "transform", "none") * args.transform_rounds):
        settings = {"transform": FIVE_COLUMNS} if kind == "transform" else {}
        rate, _, _ = sink_rate(
            broker, topic, ends, 2, args.commit_interval, args.max_buffered, root / f"transform-{i}", settings=settings
        )
        rates[kind].append(rate)
        what = "a five-column transform" if settings else "no transform"
        print(f"(k) sink, 2 participants, {what}: {rate:,.0f} committed records/s")
    ratio = statistics.median(rates["transform"]) / statistics.median(rates["none"])
    print(f"(k) with the transform / without (medians): {ratio:.2f}")
    config = load_config(
        bootstrap_servers=broker.bootstrap_servers,
        topics=[topic],
        table_path=str(root / "unused"),
        table_name="bench",
        value_schema=DEMO_VALUE_SCHEMA,
        transform=FIVE_COLUMNS,
    )
    records = read_records(broker.bootstrap_servers, topic, ends, 20_000)
    decode_s, transform_s = [], []
    for _ in range(7):
        started = time.process_time()
        rows, _ = decode_records(records, config)
        decoded = time.process_time()
        transform_rows(config, rows, records)
        decode_s.append(decoded - started)
        transform_s.append(time.process_time() - decoded)
    per_record = 1e6 / len(records)
    print(
        f"(k) a participant's CPU per record, {len(records):,} a batch (medians of 7): decoding "
        f"{statistics.median(decode_s) * per_record:.1f} µs, the five-column transform "
        f"{statistics.median(transform_s) * per_record:.1f} µs"
    )


def peer_figure(broker, topic, ends, args, root, raw, ours):
    """(f) Spark Structured Streaming → Hudi (benchmarks/peer.py, a process of its own) on the same backlog, at our
    sink's records per commit with 1 and with 2 participants, and in one micro-batch; its table checked by Kafka
    coordinates like ours. `ours`: (b)'s committed rate by number of participants."""
    produced = sum(ends.values())
    for participants, per_batch in ((1, args.max_buffered), (2, 2 * args.max_buffered), (None, 0)):
        seconds, usage, _ = run_peer(broker, topic, ends, per_batch, root / f"peer-{per_batch or 'one-batch'}", args)
        rate, peer = produced / seconds, usage["peer"]
        versus = (
            f"; our sink (b, {participants} participant(s)) / peer: {ours[participants] / rate:.2f}x"
            if participants in ours
            else ""
        )
        print(
            "(f) peer, Structured Streaming → Hudi, "
            f"{f'{per_batch:,} records per micro-batch' if per_batch else 'one micro-batch'}: {rate:,.0f} committed "
            f"records/s = {rate / raw:.1%} of raw{versus}; table checked ({produced:,} rows, no duplicate); peak "
            f"memory {peer['peak_mib']:,} MiB, CPU {peer['cpu_s']:,.0f} s"
        )


# The demo's JSON orders as a producer with a registry would write them: the same fields, Avro's types
AVRO_ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "order_id", "type": "string"},
        {"name": "customer_id", "type": "string"},
        {"name": "region", "type": "string"},
        {"name": "status", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "quantity", "type": "long"},
        {"name": "event_time", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}


def read_records(bootstrap_servers, topic, ends, limit):
    "The first `limit` records of `topic` as the sink's RawRecords."
    from confluent_kafka import Consumer, TopicPartition

    from hudi_kafka_nb.core.kafka_records import RawRecord

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"read-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(t, p, 0) for (t, p) in ends])
    records = []
    while len(records) < min(limit, sum(ends.values())):
        records += [
            RawRecord(m.topic(), m.partition(), m.offset(), m.timestamp()[1], m.key(), m.value())
            for m in consumer.consume(10_000, timeout=2)
            if m.error() is None
        ]
    consumer.close()
    return records[:limit]


# The same orders as a producer with a JSON Schema would write them: JSON's types, the event time an instant in UTC
JSON_SCHEMA_ORDER = {
    "title": "Order",
    "type": "object",
    "properties": {
        **{name: {"type": "string"} for name in ("order_id", "customer_id", "region", "status")},
        "amount": {"type": "number"},
        "quantity": {"type": "integer"},
        "event_time": {"type": "string", "format": "date-time"},
    },
}
# And as a gRPC service's producer would: a Protobuf message, the event time a well-known Timestamp
PROTOBUF_ORDER = """syntax = "proto3";
package bench;

import "google/protobuf/timestamp.proto";

message Order {
  string order_id = 1;
  string customer_id = 2;
  string region = 3;
  string status = 4;
  double amount = 5;
  int64 quantity = 6;
  google.protobuf.Timestamp event_time = 7;
}
"""


def registry_writers(registry_url: str) -> dict:
    """Per registry format (value_format → its name, a writer of a JSON order as that format's producer writes it
    with confluent-kafka's own serializer)."""
    import msgspec
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from google.protobuf import message_factory

    from hudi_kafka_nb.formats.protobuf_files import protobuf_file

    client = SchemaRegistryClient({"url": registry_url})
    avro = AvroSerializer(client, msgspec.json.encode(AVRO_ORDER).decode())
    json_schema = JSONSerializer(msgspec.json.encode(JSON_SCHEMA_ORDER).decode(), client)
    order_type = message_factory.GetMessageClass(protobuf_file(PROTOBUF_ORDER).message_types_by_name["Order"])
    protobuf = ProtobufSerializer(order_type, client, {"use.deprecated.format": False})

    def as_message(order: dict):
        message = order_type(**{k: v for k, v in order.items() if k != "event_time"})
        message.event_time.FromDatetime(datetime.fromisoformat(order["event_time"]))
        return message

    return {
        "avro": (
            "Avro",
            lambda o, c: avro({**o, "event_time": datetime.fromisoformat(o["event_time"] + "+00:00")}, c),
        ),
        "json_schema": ("JSON Schema", lambda o, c: json_schema({**o, "event_time": o["event_time"] + "Z"}, c)),
        "protobuf": ("Protobuf", lambda o, c: protobuf(as_message(o), c)),
    }


def avro_figure(broker, topic, ends, args, root):
    """(i) The same events as JSON (`topic`), and as Avro, JSON with a JSON Schema and Protobuf in Confluent's wire
    format, the schemas in an embedded registry: decode rates of a participant's decoder, in its batches, and the
    sink's committed rate with each."""
    import msgspec
    from confluent_kafka.serialization import MessageField, SerializationContext

    from hudi_kafka_nb.config.settings import load_config
    from hudi_kafka_nb.dev.producers import send_events
    from hudi_kafka_nb.formats.records import decode_batch
    from hudi_kafka_nb.formats.registry_client import ConfluentRegistry
    from hudi_kafka_nb.formats.registry_records import decode_registry
    from hudi_kafka_nb.formats.schema_registry import SchemaCache, registry_value_schema
    from hudi_kafka_nb.run.wiring import registry_format

    base = {
        "bootstrap_servers": broker.bootstrap_servers,
        "table_path": str(root / "decode"),
        "table_name": "bench",
        "partition_field": "region",
    }
    as_json = load_config(base, topics=topic, value_schema=DEMO_VALUE_SCHEMA)
    json_records = read_records(broker.bootstrap_servers, topic, ends, sum(ends.values()))
    limit, batch = args.avro_decode_records, as_json.max_batch_records
    decoders = {"JSON": (json_records[:limit], lambda records: decode_batch(records, as_json))}
    committed = {"JSON": sink_rate(broker, topic, ends, 1, args.commit_interval, args.max_buffered, root / "json-1")[0]}
    with EmbeddedRegistry(root / "registry") as registry:
        for value_format, (name, write) in registry_writers(registry.url).items():
            framed_topic = f"{topic}-{value_format.replace('_', '-')}"
            create_topic(broker.bootstrap_servers, framed_topic, 8)
            context = SerializationContext(framed_topic, MessageField.VALUE)
            written = [(r.key, write(msgspec.json.decode(r.value), context)) for r in json_records]
            framed_ends = send_events(broker.bootstrap_servers, framed_topic, written)
            settings = {"value_format": value_format, "schema_registry": {"url": registry.url}}
            config = load_config(base, topics=framed_topic, **settings)
            schema_format = registry_format(config)
            config = load_config(
                config,
                value_schema=registry_value_schema(config, ConfluentRegistry(config), schema_format=schema_format),
            )
            schemas = SchemaCache(ConfluentRegistry(config), schema_format=schema_format)
            decoders[name] = (
                read_records(broker.bootstrap_servers, framed_topic, framed_ends, limit),
                lambda records, config=config, schemas=schemas: decode_registry(records, config, schemas),
            )
            folder = root / f"{value_format}-1"
            committed[name] = sink_rate(
                broker,
                framed_topic,
                framed_ends,
                1,
                args.commit_interval,
                args.max_buffered,
                folder,
                settings={**settings, "value_schema": None},
            )[0]
        rates = {}  # each id's schema asked of the registry once, as a participant does
        for name, (records, decode) in decoders.items():
            started = time.perf_counter()
            rows = sum(decode(records[i : i + batch]).rows.num_rows for i in range(0, len(records), batch))
            rates[name] = rows / (time.perf_counter() - started)
            assert rows == len(records), (name, rows, len(records))
    for name in rates:
        print(
            f"(i) {name}: a participant decodes {rates[name]:,.0f} records/s ({limit:,} records in batches of "
            f"{batch:,}); the sink, 1 participant, commits {committed[name]:,.0f} records/s; decoding / committing "
            f"{rates[name] / committed[name]:.1f}x"
        )
    for name in list(rates)[1:]:
        print(
            f"(i) {name} / JSON: decoding {rates[name] / rates['JSON']:.2f}x, committed rate "
            f"{committed[name] / committed['JSON']:.2f}x"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--commit-interval", type=float, default=3.0)
    parser.add_argument("--max-buffered", type=int, default=60_000, help="records a participant buffers per instant")
    parser.add_argument(
        "--memory-records", type=int, default=1_000_000, help="(g): the smaller backlog; the larger is four times it"
    )
    parser.add_argument("--memory-budget-mib", type=int, default=64, help="(g): max_buffered_bytes, in MiB")
    parser.add_argument(
        "--overlap-per-instant", type=int, default=250_000, help="(h): records a participant takes into an instant"
    )
    parser.add_argument("--keyed-records", type=int, default=400_000, help="(c): order events upserted")
    parser.add_argument("--keyed-orders", type=int, default=50_000, help="(c): distinct orders (keys) among them")
    parser.add_argument(
        "--keyed-per-commit",
        type=int,
        default=100_000,
        help="(c): records per commit (the peer's per micro-batch), half for each participant",
    )
    parser.add_argument(
        "--avro-decode-records", type=int, default=200_000, help="(i): records decoded in the decode-rate figure"
    )
    parser.add_argument("--breakdown-records", type=int, default=1_200_000, help="(j): the backlog")
    parser.add_argument("--breakdown-per-instant", type=int, default=300_000, help="(j): records per commit")
    parser.add_argument(
        "--steady-s", type=float, default=45.0, help="(j): seconds of steady producing for the latency of both"
    )
    parser.add_argument(
        "--steady-rate",
        type=float,
        default=0.0,
        help="(j): records/s of that steady producing (0: half the drain rate of our sink with 2 participants)",
    )
    parser.add_argument("--transform-rounds", type=int, default=2, help="(k): rounds of none, with, with, none")
    parser.add_argument(
        "--parts",
        default="abjcdefghik",
        help="which figures: a (raw consumer), b (sink), j (where "
        "the time goes), c (keyed), d (appending, with and without the table-services job), e (the table on MinIO, "
        "with b), f (the peer: Spark Structured Streaming into Hudi), g (memory against the backlog's size), h "
        "(reading ahead against writing as rows arrive), i (Avro, JSON Schema and Protobuf against JSON), k (a "
        "transform of five computed columns against none)",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-kafka-nb-bench-"))
    with EmbeddedBroker(root / "broker") as broker:
        topic = f"bench-{uuid.uuid4().hex[:6]}"
        create_topic(broker.bootstrap_servers, topic, 8)
        print(f"producing {args.records:,} order events to 8 partitions …")
        ends = produce_orders(broker.bootstrap_servers, topic, args.records, progress=False)
        seconds, _ = raw_read(broker.bootstrap_servers, topic, ends)
        raw = sum(ends.values()) / seconds
        print(f"(a) raw confluent-kafka consumer, same fetch settings: {raw:,.0f} records/s")
        local_rates = {}
        for participants in (1, 2) if set("bef") & set(args.parts) else ():
            if participants == 1 and "b" not in args.parts:
                continue
            rate, latencies, peak = sink_rate(
                broker, topic, ends, participants, args.commit_interval, args.max_buffered, root / f"p{participants}"
            )
            local_rates[participants] = rate
            print(
                f"(b) sink, {participants} participant(s), Hudi's writer: {rate:,.0f} committed records/s = "
                f"{rate / raw:.1%} of raw; commit latency END_COMMIT→ACK median {statistics.median(latencies):.2f}s "
                f"max {max(latencies):.2f}s over {len(latencies)} commits; peak participant memory {peak / 2**20:,.0f} "
                "MiB"
            )
        if "j" in args.parts:
            breakdown_figure(broker, args, root)
        if "e" in args.parts:
            object_store_figure(broker, topic, ends, args, root, local_rates[2])
        if "f" in args.parts:
            peer_figure(broker, topic, ends, args, root, raw, local_rates)
        if "c" in args.parts:
            keyed_figure(broker, args, root)
        if "d" in args.parts:
            table_services_figure(broker, topic, ends, args, root)
        if "g" in args.parts:
            memory_figure(broker, args, root)
        if "h" in args.parts:
            overlap_figure(broker, args, root)
        if "i" in args.parts:
            avro_figure(broker, topic, ends, args, root)
        if "k" in args.parts:
            transform_figure(broker, topic, ends, args, root)
    print(f"work folder (logs, executed notebooks): {root}")


if __name__ == "__main__":
    main()
