# Standard nbdev 2 setup: everything comes from settings.ini.
from configparser import ConfigParser
from pathlib import Path
import ast, pprint, setuptools, shlex
from setuptools.command.build_py import build_py
cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']
requirements = shlex.split(cfg.get('requirements', ''))
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))
local_requirements = shlex.split(cfg.get('local_requirements', ''))
jobs_requirements = shlex.split(cfg.get('jobs_requirements', ''))


# the sink's own jars, compiled by `make setup`, inside the wheel: a role runs without the repository
SINK_JARS = ['hudi-fixes/hudi-fixes.jar', 'hudi-kafka-nb/hudi-kafka-nb.jar']


class build_py_sink_alone(build_py):
    """The wheel's index of names (nbdev's _modidx) holds only what the wheel holds: not the clone's hudi_kafka_nb.dev;
    and the wheel holds the sink's own jars."""

    def run(self):
        super().run()
        # an editable install (a clone's `make setup`, before it compiles the jars) reads them from .jars/ itself
        for jar in [] if getattr(self, 'editable_mode', False) else SINK_JARS:
            built = Path('.jars') / jar
            if not built.exists():
                raise SystemExit(f'{built} is missing: run `make setup` (it compiles the sink\'s jars) before building the wheel')
            target = Path(self.build_lib) / cfg['lib_path'] / 'jars' / jar
            target.parent.mkdir(parents=True, exist_ok=True)
            self.copy_file(str(built), str(target))
        index = Path(self.build_lib) / cfg['lib_path'] / '_modidx.py'
        if index.exists():
            head, _, literal = index.read_text().partition('d = ')
            d = ast.literal_eval(literal)
            d['syms'] = {k: v for k, v in d['syms'].items() if not k.startswith(cfg['lib_path'] + '.dev')}
            index.write_text(head + 'd = ' + pprint.pformat(d, width=120) + '\n')


setuptools.setup(
    name=cfg['lib_name'], version=cfg['version'], description=cfg['description'],
    license='Apache Software License 2.0', author=cfg['author'], author_email=cfg['author_email'],
    # the sink alone: the stack that tries and tests it (hudi_kafka_nb.dev) stays in the clone
    packages=setuptools.find_packages(include=['hudi_kafka_nb', 'hudi_kafka_nb.*'], exclude=['hudi_kafka_nb.dev', 'hudi_kafka_nb.dev.*']),
    install_requires=requirements,
    extras_require={'dev': dev_requirements + jobs_requirements, 'jobs': jobs_requirements, 'local': local_requirements}, python_requires='>=' + cfg['min_python'],
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(), 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    cmdclass={'build_py': build_py_sink_alone},
    zip_safe=False)
