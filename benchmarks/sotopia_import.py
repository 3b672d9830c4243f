"""Importing a Sotopia-sized export: `sotopia_import_s` (CPU seconds) and `sotopia_import_mb` (peak resident
memory) of `promptdesk import sotopia` on a generated export of 300 environments, 40 agents, 120
relationships and 2,800 combos (goal: under 10 s and 200 MB), and `sotopia_reimport_s`, the same import
again into the same folder (every file unchanged).

`export(n_env, n_agents, n_combos)` writes an export in Sotopia's shape (keys
`:sotopia.database.<module>.<Class>:<pk>`, stringified value lists, `<extra_info>` goals, codenames used
twice) from generated text: no Sotopia data. The tests use it too.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

PREFIX = ":sotopia.database."
WORDS = ("harbour lantern orchard ledger violin kettle bridge meadow archive bicycle garden market studio canal "
         "workshop library festival ferry bakery theatre").split()
FIRST = ("Ava Ben Chloe Dara Eli Farah Gus Hana Ivo Jade Kian Lena Milo Nia Omar Pia Quinn Rosa Sami Tess").split()
LAST = ("Lee Ko Park Diaz Novak Haddad Okafor Sato Berg Costa").split()


def pk(kind: str, n: int) -> str:
    """A ULID-like pk, distinct per kind and number."""
    return f"01{kind[:2].upper()}{n:022d}"


def export(n_env: int = 300, n_agents: int = 40, n_combos: int = 2800, seed: int = 7) -> dict:
    """An export in Sotopia's shape, of generated records."""
    rng = random.Random(seed)
    data: dict = {}
    agents = [pk("agent", i) for i in range(n_agents)]
    for i, agent in enumerate(agents):
        data[f"{PREFIX}persistent_profile.AgentProfile:{agent}"] = {
            "pk": agent, "first_name": FIRST[i % len(FIRST)], "last_name": f"{LAST[i % len(LAST)]}{i // 20 or ''}",
            "age": 20 + i % 50, "occupation": rng.choice(("Baker", "Nurse", "Engineer", "Teacher")),
            "gender": rng.choice(("Man", "Woman", "Nonbinary")), "gender_pronoun": "They/them",
            "public_info": f"Keeps a {rng.choice(WORDS)} and a {rng.choice(WORDS)}.",
            "big_five": "Openness to Experience - High; Neuroticism - Low",
            "moral_values": ["['Care'", " ' Fairness']"], "schwartz_personal_values": ["['Benevolence']"],
            "personality_and_values": f"Patient, curious about the {rng.choice(WORDS)}.",
            "decision_making_style": "Analytical", "secret": f"Hid the {rng.choice(WORDS)} key in {i} places.",
            "model_id": "nan"}
    envs = [pk("env", i) for i in range(n_env)]
    for i, env in enumerate(envs):
        place = WORDS[i % len(WORDS)]
        data[f"{PREFIX}persistent_profile.EnvironmentProfile:{env}"] = {
            "pk": env, "codename": f"{place}_dispute_{i % (n_env // 2 or 1)}", "source": "generated",
            "scenario": f"Two neighbours meet at the {place} to settle who keeps the {rng.choice(WORDS)}.",
            "agent_goals": [f"Keep the {place} for yourself (<extra_info>Extra information: you need it "
                            f"for work.<strategy_hint>Hint: offer a trade.</strategy_hint></extra_info>)",
                            "Get a fair share (<extra_info>Extra information: you were there first.</extra_info>)"],
            "relationship": i % 6, "age_constraint": "[(18, 70), (18, 70)]", "occupation_constraint": "nan",
            "agent_constraint": None}
    for i in range(n_agents * 3):
        a, b = agents[i % n_agents], agents[(i * 7 + 1) % n_agents]
        if a != b:
            data[f"{PREFIX}persistent_profile.RelationshipProfile:{pk('rel', i)}"] = {
                "pk": pk("rel", i), "agent_1_id": a, "agent_2_id": b, "relationship": i % 6,
                "background_story": f"They met at the {rng.choice(WORDS)} years ago."}
    for i in range(n_combos):
        a = rng.randrange(n_agents)
        b = (a + 1 + rng.randrange(n_agents - 1)) % n_agents
        data[f"{PREFIX}env_agent_combo_storage.EnvAgentComboStorage:{pk('combo', i)}"] = {
            "pk": pk("combo", i), "env_id": envs[i % n_env], "agent_ids": [agents[a], agents[b]]}
    return data


def write_export(path: Path, **sizes: int) -> Path:
    path.write_text(json.dumps(export(**sizes), indent=1), encoding="utf-8")
    return path


def import_in_child(source: Path, to: Path) -> dict[str, float]:
    """CPU seconds and peak resident MB of one `promptdesk import sotopia` in a fresh interpreter.

    The peak is the kernel's high-water mark of the child's own memory (`VmHWM`, which starts afresh
    at `exec`); `ru_maxrss` is kept across `exec` on Linux, so a child of a large process (a test
    worker) would report its parent's size."""
    code = ("import resource, sys\nfrom promptdesk.core.cli.main import main\n"
            "code = main(['import', 'sotopia', sys.argv[1], '--to', sys.argv[2]])\n"
            "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
            "try:\n"
            "    hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
            "except OSError:\n"
            "    hwm = usage.ru_maxrss\n"
            "print(code, usage.ru_utime + usage.ru_stime, hwm / 1024)\n")
    done = subprocess.run([sys.executable, "-c", code, str(source), str(to)], capture_output=True, text=True, check=True)
    exit_code, seconds, mb = done.stdout.split()
    return {"exit": int(exit_code), "cpu_s": float(seconds), "mb": float(mb)}


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="promptdesk-sotopia-") as folder:
        source = write_export(Path(folder) / "export.json")
        first = import_in_child(source, Path(folder) / "out")
        again = import_in_child(source, Path(folder) / "out")
    return {"sotopia_import_s": first["cpu_s"], "sotopia_import_mb": first["mb"], "sotopia_reimport_s": again["cpu_s"]}


if __name__ == "__main__":
    print(run())
