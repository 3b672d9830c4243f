"""The grammar of a scene's spoken lines: one symbol per move, every alternative carrying the scene.

No alternative is scene-free: each one holds at least one slot filled from the request (a noun phrase
of the scene or of the character, a name, the place, what was just said, what just happened, what the
director asked), so two scenes never share their lines, and an alternative whose slots the request
cannot fill is never chosen. Slots (see `speech.bindings`): `to` the addressee's name, `topic` the
scene's noun phrases, `mine` the character's own, `prop` the setting's objects, `place`, `echo` words
just heard, `fact` and `bg` the character's own sentences, `ev`/`who` what a world event brought,
`said`/`ask` what a director's note asked to say or ask, `goal_obj` what the goal asks to agree on
(`goal_do` what it asks to agree to do), `host`/`guest` the other person when the place belongs to one of them. A sentence of the character's
own (`fact`, `bg`) never ends a line: what follows a line in another actor's request is the engine's
framing, and the character's words run on into it.
"""

from __future__ import annotations

from promptdesk.core.improv.grammar import Grammar

RULES: dict[str, tuple[str, ...]] = {
    "open": (
        "#to#, thank you for coming. I wanted to talk about #topic#.",
        "I'll start, then. We're here because of #topic#.",
        "Let's not pretend, #to#. This is about #topic#.",
        "#to#, sit down. It's about #topic#, and it can't wait.",
        "Before anyone says anything else, I want #topic# on the table.",
        "So. #topic.cap#. Where do we even begin, #to#?",
        "Come in, #guest#. Welcome to #place#.",
        "#host#, thank you for having me. It's been too long.",
    ),
    "press": (
        "What happened with #topic#, #to#?",
        "#to#, I want to hear it from you: how did #topic# get this far?",
        "Nobody has said a word about #topic# yet. Why is that?",
        "I need a straight answer about #topic#, #to#.",
        "Don't tell me #topic# just happened by itself.",
        "Walk me through #topic#, #to#. From the start.",
        "How long have you known about #topic#, #to#?",
        "#to#, what are you not telling me about #topic#?",
        "Somebody knows more about #topic# than they're saying.",
        "Why won't anyone talk straight about #topic#?",
        "How did #topic# get this far without anyone noticing?",
    ),
    "explain": (
        "#bg# That's the part nobody asked about.",
        "You should know this, #to#: #bg.low# There it is.",
        "Let me explain #mine#, #to#. It isn't as simple as it looks.",
        "There's more to #topic# than anyone has said. #mine.cap# was part of it.",
        "I know what you think of #topic#. Let me finish before you decide.",
        "It comes down to #mine#, #to#.",
        "You weren't there for #mine#, #to#. I was.",
        "Hear me out on #topic# before anyone decides anything, #to#.",
        "#topic.cap# looked different from where I stood, #to#.",
        "There's a reason things went the way they did with #topic#.",
        "You've only heard half of #topic#, #to#.",
        "Before we go further on #topic#, you should know how it started.",
        "I was closer to #topic# than anyone here. Let me explain.",
    ),
    "question": (
        "What would you do about #topic#, #to#?",
        "#to#, what do you actually need from me about #topic#?",
        "Is this really about #topic#?",
        "Where does that leave #mine#?",
        "What does a good outcome look like for #topic#, #to#?",
        "And #mine#? Does anyone care about that?",
        "#to#, can I ask you something about #mine#?",
        "Is #topic# really what we should be arguing about?",
        "Who here actually knows the facts about #topic#?",
        "What are we afraid of with #topic#?",
        "What would it take to settle #topic# tonight?",
    ),
    "echo": (
        "'#echo.cap#'? That's not how I remember #topic#.",
        "You said '#echo#', #to#. What do you mean by that?",
        "'#echo.cap#' - fine. But that isn't the whole of #topic#.",
        "'#echo.cap#'. I keep hearing that, #to#, and I'm not sure I believe it.",
    ),
    "concede": (
        "You're right about #topic#, #to#. I should have said something sooner.",
        "I'll own my part in #topic#.",
        "Fair. #topic.cap# is on me as much as anyone.",
        "I hear you, #to#. #mine.cap# doesn't excuse it.",
        "That stings, #to#, but you're not wrong about #topic#.",
        "Maybe I was too quick about #topic#.",
        "All right. I got #topic# wrong.",
    ),
    "mediate": (
        "Can we slow down? This is about #topic#, not about each other.",
        "#to#, I think we both want #topic# sorted out.",
        "Let's take a breath before #topic# gets away from us.",
        "#to#, say that again, slower. I want to understand #topic#.",
        "We all want #topic# to work out. Let's remember that.",
        "One at a time on #topic#, please.",
    ),
    "propose": (
        "Here's what I suggest for #topic#: we write down who does what, today.",
        "What if we check in every week until #topic# is settled, #to#?",
        "I can take the first step on #topic# tomorrow morning.",
        "Let's make #topic# concrete: one owner, one date.",
        "#to#, give me a week on #topic#, and then we look at it together.",
        "Let's put #topic# to a vote.",
        "Why don't we each say one thing about #topic#, and then decide?",
    ),
    "agree": (
        "That works for me, #to#. #topic.cap#, then.",
        "Then that's what we do about #topic#, #to#.",
        "I can live with that plan for #topic#.",
        "Good. #topic.cap# gets done properly this time.",
        "Fine by me. Let's settle #topic# that way, #to#.",
        "Yes. I'm with you on #topic#.",
        "Then we're agreed on #topic#.",
        "I'll back that for #topic#.",
    ),
    "wind_down": (
        "I think we've said most of what there is to say about #topic#.",
        "We're nearly there with #topic#, #to#.",
        "That's enough about #topic# for one day, #to#.",
        "I don't think there's much left to say about #topic#, #to#.",
        "Let's not go round #topic# again.",
    ),
    "interrupt": (
        "No - stop there, #to#. This is about #topic#.",
        "Hold on, #to#. That's not what happened with #topic#.",
        "Wait. Before you go on about #mine# -",
        "Sorry, #to#, I have to cut in. #topic.cap#, remember?",
        "No. We keep circling #topic# and never landing.",
        "Let me stop you there, #to#. #topic.cap# first.",
    ),
    "confide": (
        "#to#, there's something I haven't said. #fact# There, it's out.",
        "I should say this plainly, #to#: #fact.low# That's the truth of it.",
        "All right. #fact# I've wanted to say that for a while.",
    ),
    "apologise": (
        "#to#, I'm sorry about #topic#. That's on me.",
        "I owe you an apology for #topic#, #to#. I'm sorry.",
        "I'm sorry, #to#. #topic.cap# should never have come to this.",
        "I want to apologise, properly, for #topic#.",
    ),
    "accept": (
        "I accept that, #to#. Thank you for saying it.",
        "All right, #to#. I accept your apology, and #topic# is behind us if we do the work.",
        "That's what I needed to hear about #topic#, #to#. I accept it.",
        "Thank you, #to#. After #topic#, that means something.",
    ),
    "agree_goal": (
        "Then we agree on #goal_obj#, #to#. I'll start with #mine#.",
        "Agreed: #goal_obj#, starting this week. #mine.cap# comes first for me.",
        "I agree, #to#. #goal_obj.cap#, written down, today.",
        "Agreed, #to#: #goal_obj#. Let's not lose it this time.",
        "#goal_obj.cap# it is, then. Count me in.",
    ),
    "admit": (
        "#to#, I have to admit something: #said.low#.",
        "All right, I'll say it. #said.cap#.",
        "I should have told you sooner, #to#: #said.low#.",
        "The truth is, #said.low#. I'm not proud of it.",
    ),
    "agree_goal_do": (
        "Then we agree, #to#: we #goal_do#. I'll start with #mine#.",
        "Agreed. We #goal_do#, starting this week.",
        "I agree, #to#. We #goal_do#, and we do it today.",
        "Agreed, then: we #goal_do#, and #mine# is mine to see to.",
        "All right, #to#, agreed: we #goal_do#. Let's stop going round it.",
        "Count me in. We agree to #goal_do#, and I'll take care of #mine#.",
        "Then it's settled, #to#. We #goal_do#.",
        "Fine by me, and agreed. We #goal_do#, the sooner the better.",
    ),
    "agree_goal_plain": (
        "Then we agree, #to#. I'll start with #mine#.",
        "Agreed, #to#. #mine.cap# comes first for me.",
        "I agree, #to#. Let's write down what we do about #topic#, today.",
        "Fine, #to#. Let's settle #topic# today and write it down.",
        "Agreed. #topic.cap#: who does what, and by when.",
        "Then that's agreed, #to#. I'll put #topic# in writing.",
        "Yes. Let's make #topic# official before anyone leaves.",
    ),
    "goal_say": (
        "#to#, let me say it plainly: #goal_line#.",
        "Here is where I stand, #to#: #goal_line#.",
        "#goal_line.cap#. That's my word on it.",
    ),
    "goal_done": (
        "There, #to#.",
        "#to#. Like this.",
        "This is for #topic#, #to#.",
        "There. For #topic#.",
    ),
    "goal_tell": (
        "#to#, let me #goal_deed#. #said.cap#.",
        "I'll #goal_deed#, #to#. #said.cap#.",
        "Then I'll #goal_deed#, #to#: #said.low#.",
        "You should hear it from me, so I'll #goal_deed#: #said.low#.",
    ),
    "thank_goal": (
        "Thank you, #to#. I mean that.",
        "#to#, thank you. Truly.",
        "I owe you my thanks, #to#, for #topic#.",
        "Thank you for hearing me out on #topic#, #to#.",
        "That helps, #to#. Thank you.",
    ),
    "thank_goal_for": (
        "Thank you, #to#, for #topic#. I mean that.",
        "#to#, thank you for #topic#. Truly.",
        "I owe you my thanks, #to#, for #topic#.",
        "Thank you for #topic#, #to#. That took something.",
        "That helps, #to#. Thank you for #topic#.",
    ),
    "confess": (
        "#to#, I have to admit something: #said.low#.",
        "The truth is, #said.low#. I'm not proud of it.",
        "I should have told you sooner, #to#: #said.low#.",
        "I'll admit it, #to#. #said.cap#.",
    ),
    "mention": (
        "#to#, I should mention #said.low#.",
        "There's #said.low#. I wanted to bring it up, #to#.",
        "Can we talk about #said.low#, #to#?",
    ),
    "ask": (
        "#to#, what about #ask.low#?",
        "Can I ask you about #ask.low#, #to#?",
        "I have to ask, #to#: #ask.low#?",
    ),
    "event": (
        "#ev.cap#? Now, #to#? In the middle of #topic#?",
        "Never mind #ev#, #to#. #topic.cap# first.",
        "Did you hear #ev#? So much for #topic#.",
        "Of all the moments for #ev#. Go on about #topic#.",
    ),
    "event_call": (
        "Leave #ev#, #to#. #topic.cap# matters more.",
        "Should someone get #ev#, or do we carry on with #topic#?",
        "Ignore #ev#, #to#. Finish what you were saying about #topic#.",
        "#ev.cap#, now? Let it ring. I want to hear about #topic#.",
    ),
    "event_noise": (
        "#ev.cap# - is everyone all right? #topic.cap# can wait a second.",
        "#ev.cap#? Nobody move for a second, #to#. Then back to #topic#.",
        "#ev.cap#, of all things, in the middle of #topic#. Are you hurt, #to#?",
    ),
    "event_enter": (
        "#who.cap#? Come in - we were just talking about #topic#.",
        "We'll have to finish #topic# in front of #who#, then.",
        "#to#, #who# is here. Do we go on with #topic#?",
        "Is that #ev#? Someone's there, and we're in the middle of #topic#.",
    ),
    "event_dark": (
        "#ev.cap# - of course. Stay where you are, #to#. #topic.cap# can wait.",
        "I can't see a thing with #ev# gone. #to#, we were talking about #topic#.",
        "#ev.cap#. Well, that fits #topic#.",
    ),
    "event_weather": (
        "Listen to #ev#. It suits #topic#, doesn't it, #to#?",
        "#ev.cap#. Nobody is going anywhere for a while, so let's settle #topic#.",
        "Of course, #ev#. And us in #place#, with #topic# still open.",
    ),
    "aftermath": (
        "So much for #ev#. Where were we on #topic#, #to#?",
        "After #ev#, I've lost my thread. #topic.cap#, wasn't it?",
        "#ev.cap# or not, #to#, we still have to settle #topic#.",
        "That business with #ev# - it changes nothing about #topic#.",
    ),
    "aftermath_enter": (
        "With #who# here, maybe we should talk about #topic# differently.",
        "#to#, now that #who# has come in, say it again about #topic#.",
    ),
    "aftermath_dark": (
        "In the dark it's easier to say, #to#: #fact.low# There.",
        "With #ev# gone, let's at least be honest about #topic#.",
    ),
    "leave_event": (
        "#ev.cap#. Everyone out - #to#, come on. #topic.cap# will keep. I'm heading out.",
        "That's #ev#. We'll finish #topic# outside, #to#. I'm off.",
        "#ev.cap# - we have to go, #topic# or not. #to#, take care.",
        "#to#, leave #topic#. It's #ev#. I'm heading out.",
    ),
    "open_talk": (
        "Sit down, #guest#. I'll see to #prop#.",
        "Well, #to#. It's been a while.",
        "So, #to#. #place.cap#, after all this time.",
        "#guest#! You found the place, then.",
        "#host#, thank you for having me. I won't stay long.",
    ),
    "press_talk": (
        "You didn't come all this way for #prop#, #to#.",
        "What's this really about, #to#? #topic.cap#?",
        "Say what you came to say about #topic#, #to#.",
        "You keep looking at #prop#, #to#. What is it?",
        "Is it #mine#, #to#? Is that why you're here?",
    ),
    "question_talk": (
        "How have you really been, #to#?",
        "Do you remember #mine#, #to#?",
        "What do you make of #topic#, #to#?",
        "#to#, when did you last think about #mine#?",
        "What do you think will come of #topic#, #to#?",
        "Has anyone asked you about #topic#, #to#?",
    ),
    "propose_talk": (
        "Stay a while, #to#. #topic.cap# can wait.",
        "Come again next week, #to#. We can talk about #topic# then.",
        "Let me think about #topic#. That's all I'll promise today.",
        "Sleep on #topic#, #to#. We can talk again.",
        "Let's leave #topic# for another day.",
    ),
    "agree_talk": (
        "All right, #to#. I'll think about #topic#.",
        "Fine. #topic.cap#, then - but in my own time.",
        "You may have a point about #topic#, #to#. Don't let it go to your head.",
        "Maybe you're right about #topic#, #to#.",
    ),
    "mediate_talk": (
        "Let's not quarrel over #topic#, #to#.",
        "We don't have to settle #topic# today, #to#.",
        "Neither of us has to be right about #topic#.",
        "Let's talk about #topic#, not fight about it.",
    ),
    "wind_down_talk": (
        "That's enough about #topic# for one morning, #to#.",
        "I think we've said what there is to say about #topic#.",
        "Let's leave #topic# there for today, #to#.",
        "That's enough about #topic#, I think.",
    ),
    "close": (
        "I should head out, #to#. We know what happens next with #topic#.",
        "I'd better get going. We'll pick up #topic# another time.",
        "I'll let you go, #to#. #topic.cap# can wait until tomorrow.",
        "I should let you get on with your day, #to#. Thank you for hearing me out about #topic#.",
        "I'll leave it there. #topic.cap# will keep.",
        "Time I was going. We'll see where #topic# stands tomorrow.",
        "That's all from me on #topic# for now.",
        "I'm going to go and think about #topic#.",
    ),
    "close_group": (
        "Thank you both for today. #topic.cap# is in better shape than this morning.",
        "Thank you all for your time. We know what happens with #topic# now.",
        "That's enough for today. #topic.cap# is clearer than before.",
        "Thank you for this. I know where #topic# stands now.",
    ),
    "close_crowd": (
        "Thank you, everyone. #topic.cap# is in better shape than this morning.",
        "Thank you all for your time. We know what happens with #topic# now.",
        "That's enough for one meeting. #topic.cap# is clearer than before.",
        "Thank you for this, all of you. I know where #topic# stands now.",
        "Good night, everyone. #topic.cap# will look better in the morning.",
        "I'll leave it there. #topic.cap# has had a fair hearing tonight.",
        "Right, that's me done. Thank you all for #topic#.",
    ),
    "close_post": (
        "That's all I have on #topic#, #to#. Let's leave it there.",
        "Back to my station, then. Take care, #to#.",
        "We've said what there is to say about #topic#. Thank you, everyone.",
        "Over to you, #to#. Good night.",
        "#topic.cap# will keep until we're through this. Let's leave it there.",
        "I'll hold my post. Thank you all.",
    ),
    "close_guest": (
        "Thank you for having me, #host#. I should get going.",
        "I should let you get on with your day, #host#. I'll call about #topic#.",
    ),
    "close_host": (
        "Take care, #guest#. You know where #place# is.",
        "Take care, #guest#. And think about #topic# before you decide anything for me.",
    ),
}
"""symbol -> alternatives; every alternative holds a slot filled from the request. A `_talk` variant
is the same move in a conversation that asks for no outcome (a visit, not a meeting)."""

FAMILIES: tuple[tuple[str, ...], ...] = (
    ("question", "press"), ("agree", "concede"), ("propose", "mediate"),
    ("question_talk", "press_talk"), ("propose_talk", "mediate_talk"))
"""Moves that say much the same in one register, shared out together among a beat's actors
(`speech.beat_share`): when one move has fewer alternatives than the cast, the others' take up the
rest, so that two actors answering blind in one beat do not say the same line."""
FAMILY_OF = {symbol: family for family in FAMILIES for symbol in family}

GRAMMAR = Grammar(RULES)
