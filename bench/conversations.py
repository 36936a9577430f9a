"""
A made-up data set for measuring recall: many visitors talking to one assistant over many game
days, and questions whose answering journal entries are known.

Everything is drawn from one seeded `random.Random`, so a seed and a size always give the same
lines and questions. What is in it, and why:

- People. Each visitor has a home town, a job, one or two relatives (and where they live), a
  pet, a favourite food, a pastime and a fear. Each of these is said once in a journal entry,
  in one of several wordings; some are said again later in other words, and about one in six is
  told by someone else (gossip), so the speaker is not always the person the fact is about.
- Facts that change. Some people move to another town, change jobs or get a new pet after the
  first fact was said; the later entry is then the answer, and a question asked between the two
  (its `at` is earlier) has the first as its answer.
- The world. Places and events (a bridge washed out, the ferry's days, who the healer is), most
  told by a visitor, some seen by the assistant; a few change (a road blocked, then cleared).
- Overlapping words. Everyone has relatives, homes and pets, many share a town, and small talk
  reuses the same words (towns, animals, jobs, relatives, food), so the words of a question
  match many entries besides its answer.
- Small talk. About four entries in five are chatter, many naming the speaker or someone
  else.
- Private entries. Whispers (`audience` = the speaker): secrets with words found nowhere else,
  and some private chatter. The owner may ask about a secret; `probes` ask about the same
  secret on behalf of someone else, who must never get it back.

The questions: for each person a few of their facts, some worded plainly (the usual words for
the thing, which one of its wordings uses) and some paraphrased (words no entry uses: "trade"
for job, "sibling" for sister), some in the first person by the person themselves ("what is my
dog called?"); a fact that changed, asked after the change and, when a day lies between, before
it; "what do you know about X?"; who shares a town or an animal; world facts; the owners'
secrets. All are asked the morning after the last day, except those before a change.

Nothing here knows how recall ranks. Answers are spread over the whole timeline, and the
importance of an entry is left to the assistant's own heuristic, which reads its words (so a
fact and small talk with the same keywords score alike).

"""

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

START = datetime(2026, 3, 2, tzinfo=timezone.utc)

NAMES = (
    "Alda Brennan Corwin Delia Edric Fenna Gareth Hilde Ivo Jessa Kael Liora Marek Nessa Oswin "
    "Perrin Quilla Rowan Sable Tamsin Ulric Vesna Wendel Ysolde Bram Cressida Doran Elowen Finch "
    "Greer"
).split()
RELATIVE_NAMES = (
    "Mara Tobin Elsa Hugh Ada Bertram Cora Dunstan Effie Godric Hazel Ingram Juno Leofric Maud "
    "Nell Osric Petra Runa Silas Thea Wulf Agnes Bede"
).split()
TOWNS = (
    "Riverton Millbrook Ashford Dunmere Highcliff Saltmarsh Oakhollow Greywater Thornbury "
    "Eastwatch Redfern Bellhaven"
).split()
RELATIVES = ("sister", "brother", "mother", "father", "cousin", "aunt", "uncle", "daughter", "son")
# what a paraphrased question calls a relative
RELATIVE_WORDS = {
    "sister": "sibling",
    "brother": "sibling",
    "mother": "parent",
    "father": "parent",
    "cousin": "kin",
    "aunt": "kin",
    "uncle": "kin",
    "daughter": "child",
    "son": "child",
}
PETS = ("dog", "cat", "goat", "raven", "horse", "ferret", "hen")
PET_NAMES = (
    "Pip Biscuit Shadow Clover Rusty Moss Juniper Pepper Bramble Sooty Tansy Ember Nettle "
    "Acorn Barley Cinder Dapple Fennel Ginger Hob"
).split()
JOBS = (
    "blacksmith baker fisher carpenter herbalist scribe guard miner weaver cartographer brewer "
    "hunter healer merchant tanner potter"
).split()
FOODS = (
    "apple pie",
    "mutton stew",
    "honey cakes",
    "smoked trout",
    "barley soup",
    "roast goose",
    "plum tart",
    "cheese and pickles",
    "mushroom pie",
    "spiced pears",
)
PASTIMES = (
    "carving wooden birds",
    "playing chess",
    "fishing at the weir",
    "singing in the choir",
    "knitting scarves",
    "reading old maps",
    "tending bees",
    "painting the hills",
)
FEARS = ("spiders", "deep water", "thunder", "heights", "the dark", "crowds", "snakes", "fire")
GOODS = ("flour", "salt", "wool", "lamp oil", "nails", "candles", "rope", "cider")
SPOTS = ("mill", "chapel", "stable", "granary", "old well", "boathouse", "smithy", "tannery")
# words that make each secret findable by its words alone (and by nothing else)
SECRET_TOKENS = tuple(
    first + second
    for first in "amber salt grey moon iron copper willow stone ashen night ember dusk".split()
    for second in "owl fern hawk well bell fox mere crow leaf jar moth pine".split()
)


# ---- templates: {p} is the person, {s} whoever tells it; several wordings each -------------

HOME = (
    "{s} told me {p} lives in {town}.",
    "{p} told me they live in {town}.",
    "{p} said home is a cottage in {town}.",
    "{p} mentioned having lived in {town} for years.",
)
MOVE = (
    "{p} has moved away from {old} and now lives in {town}.",
    "{p} said they packed up and left {old}; their new home is in {town}.",
    "{p} told me they live in {town} now, no longer in {old}.",
)
RELATIVE = (
    "{s} told me {p}'s {rel} {name} lives in {town}.",
    "{p} talked about their {rel}, {name}, who keeps a house in {town}.",
    "{p} said {name}, their {rel}, lives over in {town}.",
)
PET = (
    "{p} has a {pet} named {pet_name}.",
    "{s} told me {p}'s {pet} is called {pet_name}.",
    "{p} keeps a {pet}; its name is {pet_name}.",
)
NEW_PET = (
    "{p}'s {old_pet} {old_name} died last week; now they have a {pet} named {pet_name}.",
    "{p} took in a {pet} called {pet_name} after losing {old_name} the {old_pet}.",
)
JOB = (
    "{p} works as a {job}.",
    "{s} told me {p} earns a living as a {job}.",
    "{p} said they have been a {job} since they were young.",
)
NEW_JOB = (
    "{p} gave up being a {old} and now works as a {job}.",
    "{p} said they quit as a {old}; these days they are a {job}.",
)
FOOD = (
    "{p} loves {food}.",
    "{s} said {p}'s favourite food is {food}.",
    "{p} told me nothing beats {food}.",
)
PASTIME = (
    "{p} spends their evenings {pastime}.",
    "{p} said {pastime} is how they relax.",
    "{s} said {p} unwinds by {pastime}.",
)
FEAR = (
    "{p} is afraid of {fear}.",
    "{p} admitted to a dread of {fear}.",
    "{s} told me {p} has always feared {fear}.",
)
# said again later, in other words
AGAIN = {
    "home": "{p} talked about the market in {town}, close to their home.",
    "relative": "{p} is going to visit {name} in {town} next month.",
    "pet": "{p} brought {pet_name} along today; the {pet} slept by the fire.",
    "job": "{p} came in tired from a long day's work as a {job}.",
    "food": "{p} ordered {food} again tonight.",
    "pastime": "{p} showed me the results of {pastime}.",
    "fear": "{p} went pale when someone talked of {fear}.",
}

# (kind, entry text, questions worded like it, paraphrased questions)
QUESTIONS = {
    "home": (
        ("Where does {p} live?", "Which town does {p} live in?"),
        ("Where is {p} based?", "Where does {p} reside?", "Where is {p}'s dwelling?"),
        ("Where do I live, do you remember?",),
    ),
    "relative": (
        ("Where does {p}'s {rel} live?", "What is the name of {p}'s {rel}?"),
        ("Which town is {p}'s {rel_word} in?", "Who is {p}'s {rel_word}?"),
        ("Where does my {rel} live, do you remember?",),
    ),
    "pet": (
        ("What is {p}'s {pet} called?", "What is the name of {p}'s {pet}?"),
        ("What animal does {p} look after?", "Does {p} own any animal?"),
        ("Do you remember what my {pet} is called?",),
    ),
    "job": (
        ("What does {p} work as?", "What is {p}'s job?"),
        ("What is {p}'s trade?", "What is {p}'s occupation?", "How does {p} make money?"),
        ("Do you remember what work I do?",),
    ),
    "food": (
        ("What food does {p} love?", "What is {p}'s favourite food?"),
        ("What dish would please {p}?", "What should I cook for {p}?"),
        ("What is my favourite food, do you remember?",),
    ),
    "pastime": (
        ("What does {p} do in the evenings?", "How does {p} unwind?"),
        ("How does {p} pass the time?", "What is {p}'s hobby?"),
        ("Do you remember what I do in the evenings?",),
    ),
    "fear": (
        ("What is {p} afraid of?", "What has {p} always feared?"),
        ("What frightens {p}?", "What scares {p} the most?"),
        ("Do you remember what I am afraid of?",),
    ),
}

# world facts: (entry, questions like it, paraphrased questions); {town} and {name} filled in
WORLD = (
    (
        "{s} said the bridge at {town} washed out in the last storm.",
        "What happened to the bridge at {town}?",
        "Can I still cross the river near {town}?",
    ),
    (
        "{s} told me the smithy in {town} sells the best horseshoes.",
        "Where can I buy good horseshoes?",
        "Who would shoe my horse well?",
    ),
    (
        "{s} said the harvest festival is held in {town} each autumn.",
        "Where is the harvest festival held?",
        "Where do people celebrate the end of the reaping season?",
    ),
    (
        "{s} warned that wolves have been seen on the road to {town}.",
        "Have wolves been seen on the road to {town}?",
        "Is it dangerous to travel toward {town}?",
    ),
    (
        "{s} said the mine north of {town} closed after a cave-in.",
        "Is the mine north of {town} still open?",
        "Can a digger find work in the hills above {town}?",
    ),
    (
        "{s} told me the ferry at {town} only runs on market days.",
        "When does the ferry at {town} run?",
        "When can I get a boat across at {town}?",
    ),
    (
        "{s} said the healer in {town} is called {name}.",
        "Who is the healer in {town}?",
        "Who tends the sick in {town}?",
    ),
    (
        "{s} told me the inn at {town} is called the {name} Arms.",
        "What is the inn at {town} called?",
        "Where can I lodge for the night in {town}?",
    ),
    (
        "A notice in the square says the granary in {town} pays well for barley.",
        "Who pays well for barley?",
        "Where can a farmer sell grain for a good price?",
    ),
    (
        "{s} said the old tower near {town} is haunted by a grey lady.",
        "Is the old tower near {town} haunted?",
        "Are there ghosts close to {town}?",
    ),
)
WORLD_CHANGES = (
    (
        "{s} said a rockslide has blocked the road to {town}.",
        "{s} said the rockslide on the road to {town} has been cleared.",
        "Is the road to {town} blocked?",
        "Can wagons get through to {town}?",
    ),
    (
        "{s} said the {town} market is held on Tuesdays.",
        "{s} told me the {town} market has moved to Fridays.",
        "What day is the {town} market held?",
        "When should I go to {town} to trade?",
    ),
)

SECRETS = (
    (
        "{p} whispered that their savings are hidden under the {token} stone in the {spot}.",
        "Where did I hide my savings?",
        "Where has {p} hidden their savings?",
    ),
    (
        "{p} confided that the password to the guild cellar is {token}.",
        "What is the password to the guild cellar?",
        "What is the password {p} uses for the guild cellar?",
    ),
    (
        "{p} whispered that they owe {other} forty crowns from the {token} wager.",
        "How much do I owe {other}, and for what?",
        "What does {p} owe {other}?",
    ),
    (
        "{p} confided that they are secretly courting {other}, and signed a letter {token}.",
        "Who am I courting in secret?",
        "Who is {p} secretly courting?",
    ),
    (
        "{p} whispered that they found a silver ring marked {token} near the {spot} and kept it.",
        "What did I find near the {spot}?",
        "Did {p} find a silver ring?",
    ),
)

SMALL_TALK = (
    "{p} complained about the rain.",
    "{p} said the weather is turning cold.",
    "{p} laughed at the bard's song about {town}.",
    "{p} asked whether I had seen a stray {pet} near the well.",
    "{p} said their {rel} would have liked tonight's music.",
    "{p} ordered a bowl of {food} and said it was too salty.",
    "{p} talked about the price of {goods} in {town}.",
    "{p} asked for help carrying sacks of {goods}.",
    "{p} promised to bring news from the market in {town}.",
    "{p} said it is important to keep the hearth lit.",
    "{p} asked my name again and laughed.",
    "{p} wondered aloud whether a {job} earns more than a {job2}.",
    "{p} said the road from {town} was muddy.",
    "{p} greeted everyone and sat by the fire.",
    "{p} and I talked about old songs for a while.",
    "{p} asked me to remember to save them a seat.",
    "{p} said they saw a {pet} chasing crows near {town}.",
    "{p} mentioned a strange dream about {town}.",
    "{p} joked that {other} snores like a bear.",
    "{p} said {other} owes them a drink.",
    "{p} asked if {other} had been in today.",
    "{p} said a {job} from {town} was asking about work.",
    "{p} told a long story about a {pet} that could count.",
    "{p} said their {rel} is always late.",
    "{p} asked what the quest board in the square says today.",
    "{p} said the {spot} needs a new roof.",
    "{p} said {other} lives too far away to visit often.",
    "{p} said the best {food} is found far from {town}.",
)
QUIET = (
    "The fire burned low tonight.",
    "It rained all afternoon.",
    "A traveller from {town} passed through without a word.",
    "The bell of the chapel rang at noon.",
    "A cart loaded with {goods} went by toward {town}.",
)
PRIVATE_TALK = (
    "{p} whispered that the stew tasted odd today.",
    "{p} whispered that {other} looked tired.",
    "{p} quietly asked whether I sleep at all.",
)


@dataclass
class Line:
    """One journal entry to write, in time order; `index` is its position among them."""

    index: int
    text: str
    time: datetime
    speaker: str | None
    place: str
    about: tuple[str, ...]
    audience: tuple[str, ...] | None
    kind: str  # fact, again, change, world, secret, talk, private talk


@dataclass
class Question:
    """A question and the lines that answer it.

    Attributes:
        text (str): What is asked.
        gold (tuple): Indices of the lines that answer it (any one will do).
        at (datetime): When it is asked: lines after it do not exist yet.
        asker (str): Who asks (the audience of the answer, and someone present).
        category (str): What kind of question it is (for the breakdown).
        named (tuple): The people it names.

    """

    text: str
    gold: tuple[int, ...]
    at: datetime
    asker: str
    category: str
    named: tuple[str, ...] = ()


@dataclass
class Probe:
    """A secret asked about on behalf of someone it was not told to: it must not come back."""

    text: str
    at: datetime
    asker: str
    secret: int
    token: str


@dataclass
class Conversations:
    """The whole data set (see the module doc)."""

    people: list[str]
    days: int
    lines: list[Line]
    questions: list[Question]
    probes: list[Probe]
    nights: list[datetime]
    asked_at: datetime
    tokens: dict[int, str] = field(default_factory=dict)  # secret line -> its unique word

    def hidden_from(self, asker: str) -> set[int]:
        """The private lines `asker` may not know."""
        return {
            line.index
            for line in self.lines
            if line.audience is not None and asker not in line.audience
        }


@dataclass
class _Event:
    """A line before its time within the day is fixed."""

    day: int
    speaker: str | None
    text: str
    about: tuple[str, ...]
    kind: str
    audience: tuple[str, ...] | None = None
    tag: object = None  # what a question refers to (the fact key)


def generate(people: int = 24, days: int = 35, seed: int = 8) -> Conversations:
    """Make the data set.

    Args:
        people (int): How many visitors (at most 30).
        days (int): Game days of visits.
        seed (int): The random seed.

    Returns:
        Conversations: Lines in time order, questions, privacy probes.

    """
    rng = random.Random(seed)
    names = NAMES[:people]
    tokens = list(SECRET_TOKENS)
    rng.shuffle(tokens)
    visits = {
        person: sorted(rng.sample(range(days), max(3, round(days * rng.uniform(0.2, 0.4)))))
        for person in names
    }
    events: list[_Event] = []
    facts: dict[tuple, list[_Event]] = {}  # (person, kind[, n]) -> its events, in order

    def say(day, speaker, text, about, kind, tag=None, audience=None) -> _Event:
        event = _Event(day, speaker, text, tuple(about), kind, audience, tag)
        events.append(event)
        if tag is not None:
            facts.setdefault(tag, []).append(event)
        return event

    def teller(person: str, day_pool: list[int]) -> tuple[str, int]:
        """Who says a fact about `person`, and when: mostly themselves, sometimes gossip."""
        if rng.random() < 0.17:
            other = rng.choice([n for n in names if n != person])
            return other, rng.choice(visits[other])
        return person, rng.choice(day_pool)

    profiles = {}
    for person in names:
        early = visits[person][: max(1, int(len(visits[person]) * 0.6))]
        home = rng.choice(TOWNS)
        profile = {
            "home": home,
            "job": rng.choice(JOBS),
            "pet": rng.choice(PETS),
            "pet_name": rng.choice(PET_NAMES),
            "food": rng.choice(FOODS),
            "pastime": rng.choice(PASTIMES),
            "fear": rng.choice(FEARS),
            "relatives": [],
        }
        for rel in rng.sample(RELATIVES, rng.choice((1, 1, 2))):
            profile["relatives"].append((rel, rng.choice(RELATIVE_NAMES), rng.choice(TOWNS)))
        profiles[person] = profile
        fill = dict(p=person, town=home, job=profile["job"], pet=profile["pet"])
        fill.update(pet_name=profile["pet_name"], food=profile["food"])
        fill.update(pastime=profile["pastime"], fear=profile["fear"])
        told: dict[str, _Event] = {}
        for kind, templates in (
            ("home", HOME),
            ("pet", PET),
            ("job", JOB),
            ("food", FOOD),
            ("pastime", PASTIME),
            ("fear", FEAR),
        ):
            speaker, day = teller(person, early)
            text = _worded(rng, templates, speaker, **fill)
            told[kind] = say(day, speaker, text, [person], "fact", (person, kind))
        for n, (rel, name, town) in enumerate(profile["relatives"]):
            speaker, day = teller(person, early)
            text = _worded(rng, RELATIVE, speaker, p=person, rel=rel, name=name, town=town)
            told[f"relative{n}"] = say(
                day, speaker, text, [person], "fact", (person, "relative", n)
            )
        # some facts are said again later, in other words
        for key, event in told.items():
            kind = key.rstrip("01")
            later = [d for d in visits[person] if d > event.day]
            if later and rng.random() < 0.15:
                values = dict(fill)
                if kind == "relative":
                    rel, name, town = profile["relatives"][int(key[-1])]
                    values.update(name=name, town=town)
                say(
                    rng.choice(later),
                    person,
                    AGAIN[kind].format(**values),
                    [person],
                    "again",
                    event.tag,
                )
        # facts that change, after the first was said and in the second half of the visits
        changes = (("home", 0.35), ("job", 0.25), ("pet", 0.2))
        for kind, chance in changes:
            # after the fact was first said, and after any time it was said again
            said_last = max(event.day for event in facts[(person, kind)])
            later = [d for d in visits[person] if d > said_last and d >= days * 0.4]
            if not later or rng.random() >= chance:
                continue
            day = rng.choice(later)
            if kind == "home":
                new = rng.choice([t for t in TOWNS if t != home])
                text = rng.choice(MOVE).format(p=person, old=home, town=new)
                profile["home"] = new
            elif kind == "job":
                new = rng.choice([j for j in JOBS if j != profile["job"]])
                text = rng.choice(NEW_JOB).format(p=person, old=profile["job"], job=new)
                profile["job"] = new
            else:
                pet, pet_name = rng.choice(PETS), rng.choice(PET_NAMES)
                text = rng.choice(NEW_PET).format(
                    p=person,
                    old_pet=profile["pet"],
                    old_name=profile["pet_name"],
                    pet=pet,
                    pet_name=pet_name,
                )
                profile["old_pet"] = profile["pet"]
                profile["pet"], profile["pet_name"] = pet, pet_name
            say(day, person, text, [person], "change", (person, kind))
        # one or two secrets, whispered
        for secret in rng.sample(SECRETS, rng.choice((1, 1, 2))):
            other = rng.choice([n for n in names if n != person])
            token = tokens.pop()
            spot = rng.choice(SPOTS)
            text = secret[0].format(p=person, token=token, spot=spot, other=other)
            say(
                rng.choice(visits[person]),
                person,
                text,
                [person],
                "secret",
                (person, "secret", token, secret, spot, other),
                audience=(person,),
            )

    # the world
    towns = list(TOWNS)
    world_tags = []
    for number, (template, like, _paraphrased) in enumerate(WORLD):
        # a question that names no town has one answer only
        count = 2 if people >= 12 and "{town}" in like else 1
        for town in rng.sample(towns, count):
            speaker = None if template.startswith("A notice") else rng.choice(names)
            day = rng.choice(visits[speaker]) if speaker else rng.randrange(days)
            text = template.format(s=speaker, town=town, name=rng.choice(RELATIVE_NAMES))
            tag = ("world", number, town)
            say(day, speaker, text, [], "world", tag)
            world_tags.append(tag)
    for number, (before, after, *_questions) in enumerate(WORLD_CHANGES):
        town = rng.choice(towns)
        tag = ("world change", number, town)
        first_teller, second_teller = rng.sample(names, 2)
        first = rng.choice([d for d in visits[first_teller] if d < days - 1] or [0])
        second = [d for d in visits[second_teller] if d > first] or [days - 1]
        say(first, first_teller, before.format(s=first_teller, town=town), [], "world", tag)
        after_text = after.format(s=second_teller, town=town)
        say(rng.choice(second), second_teller, after_text, [], "change", tag)
        world_tags.append(tag)

    # small talk: every visit gets some, plus the assistant's own quiet notes
    for person in names:
        for day in visits[person]:
            for _ in range(rng.randint(2, 6)):
                text = rng.choice(SMALL_TALK).format(**_talk_fill(rng, person, names))
                say(day, person, text, [person], "talk")
            if rng.random() < 0.15:
                text = rng.choice(PRIVATE_TALK).format(**_talk_fill(rng, person, names))
                say(day, person, text, [person], "private talk", audience=(person,))
    for day in range(days):
        for _ in range(rng.randint(1, 3)):
            say(day, None, rng.choice(QUIET).format(**_talk_fill(rng, None, names)), [], "quiet")

    lines = _timed(rng, events, days)
    index_of = {id(event): line.index for event, line in lines}
    lines = [line for _, line in lines]
    nights = [START + timedelta(days=day, hours=23, minutes=30) for day in range(days)]
    asked_at = START + timedelta(days=days, hours=9)

    def gold(tag, upto: datetime | None = None) -> tuple[int, ...]:
        """The lines that say `tag`'s current value at `upto` (a change wins from then on)."""
        said = [index_of[id(e)] for e in facts[tag]]
        said = [i for i in said if upto is None or lines[i].time <= upto]
        changes = [i for i in said if lines[i].kind == "change"]
        if changes:
            return (max(changes),)
        return tuple(sorted(said))

    questions: list[Question] = []
    probes: list[Probe] = []
    secret_tokens: dict[int, str] = {}

    def ask(text, tag_gold, category, asker, named, at=None):
        if tag_gold:
            questions.append(Question(text, tag_gold, at or asked_at, asker, category, named))

    for person in names:
        profile = profiles[person]
        others = [n for n in names if n != person]
        # a fact that changed is asked about below, before and after its change
        kinds = ["home", "pet", "job", "food", "pastime", "fear", "relative"]
        kinds = [
            k for k in kinds if not any(e.kind == "change" for e in facts.get((person, k), []))
        ]
        for kind in rng.sample(kinds, min(5, len(kinds))):
            like, paraphrased, first_person = QUESTIONS[kind]
            tag = (person, kind) if kind != "relative" else (person, "relative", 0)
            values = dict(p=person, pet=profile["pet"])
            if kind == "relative":
                rel = profile["relatives"][0][0]
                values.update(rel=rel, rel_word=RELATIVE_WORDS[rel])
            roll = rng.random()
            if roll < 0.12:
                text, asker, category = rng.choice(first_person), person, "first person"
            elif roll < 0.5:
                text, asker, category = rng.choice(paraphrased), rng.choice(others), "paraphrase"
            else:
                text, asker, category = rng.choice(like), rng.choice(others), "plain words"
            ask(text.format(**values), gold(tag), category, asker, (person,))
        # a fact that changed: asked after the change, and before it
        for kind in ("home", "job", "pet"):
            said = facts.get((person, kind), [])
            change = [e for e in said if e.kind == "change"]
            if not change:
                continue
            first_day, change_day = said[0].day, change[0].day
            like = QUESTIONS[kind][0]
            pet = profile["pet"] if kind != "pet" else profile.get("old_pet", profile["pet"])
            text = rng.choice(like).format(p=person, pet=profile["pet"])
            ask(text, gold((person, kind)), "changed: after", rng.choice(others), (person,))
            if change_day > first_day + 1:
                at = START + timedelta(days=rng.randrange(first_day + 1, change_day), hours=7)
                text = rng.choice(like).format(p=person, pet=pet)
                answer = gold((person, kind), upto=at)
                ask(text, answer, "changed: before", rng.choice(others), (person,), at)
        if rng.random() < 0.35:
            about = [t for t in facts if t[0] == person and t[1] not in ("secret",)]
            answer = tuple(sorted({i for t in about for i in gold(t)}))
            text = rng.choice(("What do you know about {p}?", "Tell me about {p}."))
            ask(text.format(p=person), answer, "about a person", rng.choice(others), (person,))
        for tag in [t for t in facts if t[0] == person and t[1] == "secret"]:
            _, _, token, secret, spot, other = tag
            (index,) = gold(tag)
            secret_tokens[index] = token
            values = dict(p=person, spot=spot, other=other)
            if rng.random() < 0.5:
                ask(secret[1].format(**values), (index,), "own secret", person, ())
            for asker in rng.sample(others, 2):
                probes.append(Probe(secret[2].format(**values), asked_at, asker, index, token))

    # shared facts: who lives in a town, who keeps an animal (any of them will do)
    by_town: dict[str, list[str]] = {}
    by_pet: dict[str, list[str]] = {}
    for person in names:
        by_town.setdefault(profiles[person]["home"], []).append(person)
        by_pet.setdefault(profiles[person]["pet"], []).append(person)
    for town, residents in sorted(by_town.items()):
        if len(residents) >= 2:
            answer = tuple(sorted(i for p in residents for i in gold((p, "home"))))
            ask(f"Who lives in {town}?", answer, "shared", rng.choice(names), ())
    for pet, owners in sorted(by_pet.items()):
        if len(owners) >= 2:
            answer = tuple(sorted(i for p in owners for i in gold((p, "pet"))))
            ask(f"Who keeps a {pet}?", answer, "shared", rng.choice(names), ())
    # the world
    for tag in world_tags:
        number, town = tag[1], tag[2]
        templates = WORLD[number][1:] if tag[0] == "world" else WORLD_CHANGES[number][2:]
        paraphrase = rng.random() < 0.4
        text = templates[1 if paraphrase else 0].format(town=town)
        category = "world: paraphrase" if paraphrase else "world"
        ask(text, gold(tag), category, rng.choice(names), ())
    return Conversations(
        people=list(names),
        days=days,
        lines=lines,
        questions=questions,
        probes=probes,
        nights=nights,
        asked_at=asked_at,
        tokens=secret_tokens,
    )


def _worded(rng: random.Random, templates, speaker: str, **values) -> str:
    """A fact in one of its wordings: the person's own words, or someone else's."""
    own = [template for template in templates if "{s}" not in template]
    gossip = [template for template in templates if "{s}" in template]
    if speaker == values["p"]:
        return rng.choice(own).format(**values)
    if gossip:
        return rng.choice(gossip).format(s=speaker, **values)
    return f"{speaker} told me that " + rng.choice(own).format(**values)


def _talk_fill(rng: random.Random, person: str | None, names) -> dict:
    jobs = rng.sample(JOBS, 2)
    return dict(
        p=person,
        town=rng.choice(TOWNS),
        pet=rng.choice(PETS),
        rel=rng.choice(RELATIVES),
        food=rng.choice(FOODS),
        goods=rng.choice(GOODS),
        job=jobs[0],
        job2=jobs[1],
        spot=rng.choice(SPOTS),
        other=rng.choice([n for n in names if n != person]),
    )


def _timed(rng: random.Random, events: list[_Event], days: int) -> list[tuple[_Event, Line]]:
    """Give each event a time: each visitor's lines of a day form one visit (a session) at an
    hour of its own; the assistant's quiet notes fall anywhere in the day."""
    by_session: dict[tuple, list[_Event]] = {}
    for event in events:
        by_session.setdefault((event.day, event.speaker or ""), []).append(event)
    timed = []
    for (day, speaker), session in sorted(by_session.items()):
        rng.shuffle(session)
        # facts that change come after what they change within a visit
        session.sort(key=lambda e: e.kind == "change")
        start = START + timedelta(days=day, hours=rng.uniform(8, 20))
        place = rng.choice(("the tavern", "the market", "the square", "the reading room"))
        for n, event in enumerate(session):
            if not speaker:
                start = START + timedelta(days=day, hours=rng.uniform(7, 22))
            moment = start + timedelta(minutes=3 * n + rng.uniform(0, 2))
            timed.append((event, moment, place))
    timed.sort(key=lambda item: item[1])
    return [
        (
            event,
            Line(
                index=n,
                text=event.text,
                time=moment.replace(microsecond=0),
                speaker=event.speaker,
                place=place,
                about=event.about,
                audience=event.audience,
                kind=event.kind,
            ),
        )
        for n, (event, moment, place) in enumerate(timed)
    ]
