"""A session: actors, a recorder and a turn policy on one async engine; this module is its run loop.

`Session.run()` opens the run folder, spawns and briefs the actors, plays the format's turn policy,
closes (the goal verdict, the journal step) and writes every derived file. The event stream and
the control channel are the `Stage`'s (`promptdesk.core.engine.stage`).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from promptdesk.core.engine import checks, evaluation, journals, turn
from promptdesk.core.record import outputs
from promptdesk.core.engine.result import SessionResult
from promptdesk.core.engine.stage import SceneStopped, Stage
from promptdesk.core.engine.coordinator import Decision
from promptdesk.core.errors import ProviderError, RecordingError, recording_error
from promptdesk.core.record.events import COORDINATOR, CloseEvent
from promptdesk.core.engine.outcome import PROVIDER_ERROR
from promptdesk.core.providers.base import Provider, Request
from promptdesk.core.record.recorder import ACTIVE, DebugLogHandler
from promptdesk.core.record.private import write_private



class Session(Stage):
    """Owns the actors, the recorder and the coordinator for one run of one scene, and plays it."""

    async def ask_judge(self, request: Request) -> str:
        """Send a coordinator judge's request (recorded and priced like any other call)."""
        if self.judge_provider is None:
            raise ProviderError("no provider for the coordinator judge")
        try:
            completion = await turn.call(self, self.judge_provider, request)
        except (ProviderError, RecordingError):
            raise
        except Exception as exc:  # noqa: BLE001 - the judge falls back to role C on a ProviderError
            raise ProviderError(f"judge call failed: {turn.failure_reason(exc)}") from exc
        return completion.text

    def say(self, type_: str, text: str, **extra):  # type: ignore[override]
        """`Stage.say`, with the fields the format's state adds to every event of its own (a collaboration's
        `session_id`, `round`, …: `format_tags`) where the caller did not set them."""
        return super().say(type_, text, **{**self.format_tags(extra.get("source")), **extra})

    def format_tags(self, source: str | None = None) -> dict:
        """What the format's state (`event_tags`, when it has one) adds to an event from `source`."""
        tags = getattr(self.format_state, "event_tags", None)
        return tags(self.now(), source) if callable(tags) else {}

    # -- the run ----------------------------------------------------------------------------

    async def run(self) -> SessionResult:
        """Play the scene to its close and write every file of the run folder.

        When the folder cannot be written any more (a full disk, a permission), the run stops at once
        and the result says so (`close_reason` `record-error`, `error` the message)."""
        self.recorder.on_failure = self._recording_failed
        try:
            if self.seam is None:
                self.recorder.open()
                self.recorder.write_notes(self.notes)
                if self.private_record is not None:
                    write_private(self.recorder.run_dir, self.private_record)
        except OSError as exc:
            self.recorder.failure = error = recording_error(exc, f"the run folder {self.recorder.run_dir}")
            self.state.status, self.state.close_reason = "closed", "record-error"
            return SessionResult(self.recorder.run_dir, "record-error", False, 0, 0, str(error))
        await asyncio.to_thread(self._prepare_providers)
        handler = DebugLogHandler(self.recorder)
        logging.getLogger("promptdesk").addHandler(handler)
        token = ACTIVE.set(self.recorder)
        try:
            return await self._run()
        finally:
            ACTIVE.reset(token)
            logging.getLogger("promptdesk").removeHandler(handler)

    async def _run(self) -> SessionResult:
        self._t0 = self.clock.now() - self.t_offset
        self.state.status = "running"
        if self.journal_resume is not None:
            decision = await self._finish_journal_step()
        else:
            decision = await self._scene()
        closing = ([f"Judge fallback: {outputs.fallback_notice(self.state.judge_fallbacks)}"]
                   if self.state.judge_fallbacks else []) + self.state.closing_notices
        for notice in closing:
            try:
                self.recorder.add_note(notice)
            except OSError as exc:
                self.recorder.log("warning", f"notes.md could not take a closing notice: {exc!r}")
        try:
            self.recorder.finish(datetime.now())
        except RecordingError:
            pass
        self._files_written = True
        await self._close_providers()
        self.state.status = "closed"
        failure = self.recorder.failure
        if failure is not None:
            self.state.close_reason = "record-error"
        return SessionResult(self.recorder.run_dir, "record-error" if failure else decision.reason or "natural",
                             decision.goal_achieved and not failure, self.state.beat + 1,
                             len(outputs.errors(self.recorder.events)), str(failure) if failure else None,
                             len(outputs.salvaged(self.recorder.events)))

    async def _scene(self) -> Decision:
        """Spawn (or take up a resumed log), play the format, give the verdict, close."""
        try:
            if self.seam is None or not any(e.type == "start" for e in self.recorder.events):
                self._spawn()
            if self.seam is not None:
                self.say(self.seam_type, **self.seam)
        except RecordingError:  # the disk failed before the first beat: nothing is played, no judge asked
            return Decision(decision="close", reason="record-error", text=str(self.recorder.failure))
        played = await self._play()
        try:
            self.announce_stop()
        except RecordingError:
            pass
        try:
            decision = await checks.with_verdict(self, self._honest(played))
        except RecordingError:  # the disk failed while the judge's request was being recorded
            decision = Decision(decision="close", reason="record-error", text=str(self.recorder.failure))
        self._taking_controls = False
        self._deliver_pending()
        self.state.status = "closing"
        try:
            if self.recorder.failure is None:
                await self._close(decision)
        except RecordingError:
            pass
        return decision

    async def _finish_journal_step(self) -> Decision:
        """A run killed in its journal step (`promptdesk.core.casting.journal_resume`): the seam, then the
        entries still missing; the close stays the one on the log."""
        close = outputs.close_event(self.recorder.events)
        self._taking_controls = False
        self.state.status = "closing"
        self.state.close_reason = close.reason if close else None
        slugs, recorded = self.journal_resume or ([], [])
        try:
            if self.seam is not None:
                self.say("resume", **self.seam)
            await journals.resume_step(self, slugs, recorded)
        except RecordingError:
            pass
        return Decision(decision="close", reason=close.reason if close else "natural", text=close.text if close else "",
                        goal_achieved=close.goal_achieved if close else None)

    async def _close(self, decision: Decision) -> None:
        """Record the close, then (unless stopped) the journal step and the evaluation step."""
        self.state.close_reason = decision.reason
        self.emit(CloseEvent(t=self.now(), **{"from": COORDINATOR}, text=decision.text or f"Scene closed: {decision.reason}",
                             reason=decision.reason or "natural", goal_achieved=decision.goal_achieved,
                             goal_reason=decision.goal_reason, beat=self.state.beat, **self.format_tags()))
        if decision.reason not in journals.SKIPPED_AFTER and not self._stopped:
            await journals.write_all(self)
        await evaluation.evaluate_all(self, decision.reason)

    def _honest(self, decision: Decision) -> Decision:
        """The close decision, unless the run was aborted or no call at all succeeded: then
        `provider-error` with the cause (an operator's stop stays a stop)."""
        if self.failure is None and (not self.health.all_failed or decision.reason == "stop"):
            return decision
        cause = self.failure or f"no call succeeded; the last failure: {self.health.cause}"
        return Decision(decision="close", reason=PROVIDER_ERROR, text=f"Run stopped: {cause}")

    def _providers(self) -> list[Provider]:
        """Every distinct provider of the run: the actors', the judge's, the facilitator's, the evaluators'."""
        found = [a.provider for a in self.actors.values()] + [self.judge_provider, *self.format.providers(self)]
        found += [evaluator.provider for evaluator in self.evaluators]
        return list({id(p): p for p in found if isinstance(p, Provider)}.values())

    def _prepare_providers(self) -> None:
        """Import the provider SDKs and build their clients before the first beat (run in a worker
        thread, so that beat 0 waits only for its calls, not for an import on the event loop)."""
        for provider in self._providers():
            provider.on_notice = self._provider_notice
            try:
                provider.prepare()
            except Exception as exc:  # the first call meets the same failure, and reports it
                self.recorder.log("warning", f"preparing provider {provider.name} failed: {exc!r}")

    def _provider_notice(self, text: str) -> None:
        """What a provider tells the operator about its server: a `system` line (stderr, the
        transcript) and a line in `notes.md` (`debug.log` has it from the provider's own log)."""
        self.recorder.add_note(text)
        self.say("system", text, reason="server")

    def _spawn(self) -> None:
        """The start of the log: the `start` event, then each actor spawned and briefed."""
        self.say("start", f"Scene {self.scene.name} started", **self.start_info)
        for actor in self.actors.values():
            self.say("spawn", f"Spawning actor for character {actor.slug}", target=actor.slug)
            self.say("brief", self.format.brief_text(actor.briefing), target=actor.slug)

    async def _close_providers(self) -> None:
        """Release every provider's connections (each shared instance once)."""
        for provider in self._providers():
            try:
                await provider.aclose()
            except Exception as exc:  # a failed close must not lose a finished run
                self.recorder.log("warning", f"closing provider {provider.name} failed: {exc!r}")

    async def _play(self) -> Decision:
        try:
            return await self.format.play(self)
        except SceneStopped:
            return Decision(decision="close", reason="stop", text="Scene stopped by the operator")
        except RecordingError:
            return Decision(decision="close", reason="record-error", text=str(self.recorder.failure))
        except Exception as exc:
            if self.recorder.failure is not None:
                return Decision(decision="close", reason="record-error", text=str(self.recorder.failure))
            self.recorder.log("error", f"engine failure: {exc!r}")
            try:
                self.say("system", f"The scene ended on an engine error: {exc}")
            except RecordingError:
                pass
            return Decision(decision="close", reason="error", text=str(exc))
        finally:
            await self._calls_cut_off()
            for provider in self._providers():  # the next beat's requests, sent ahead, are never asked now
                await provider.drop_early()

    async def _calls_cut_off(self) -> None:
        """Wait for the calls a stop (the operator's, a sweep's budget, a failed run) cancelled to end,
        so that each records its `call` event (usage unknown: its server may bill what it generated)
        before the close, never after the record is finished, where it would be lost and count as $0."""
        left = [task for task in self._tasks if not task.done() and task is not asyncio.current_task()]
        for task in left:
            task.cancel()
        if left:
            await asyncio.gather(*left, return_exceptions=True)

    async def check(self, new_speech: list) -> Decision | None:
        """After a beat: the limits, then the coordinator. Returns a close decision or None."""
        return await checks.after_beat(self, new_speech)
