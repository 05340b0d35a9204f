"""Issue 51 item 2: a judge's system message says what its answer looks like in one
line, not in its JSON schema (three times the tokens; structured output holds the
answer to the schema anyway)."""

from __future__ import annotations

from ragmark.judges.faithfulness import CLAIMS_PROMPT, VERIFY_PROMPT, ClaimsInput, VerifyInput
from ragmark.judges.pairwise import pair_prompt


def test_the_system_message_sketches_the_answer():
    system = VERIFY_PROMPT.render(VerifyInput(context=["c"], claim=["a"]))[0]["content"]
    assert system.endswith(
        'shaped like this:\n{"verdicts": [{"claim": <integer: the number of the claim, '
        'from 1>, "supported": true or false}, ...]}')
    assert "$defs" not in system and '"type"' not in system
    claims = CLAIMS_PROMPT.render(ClaimsInput(question="q", answer="a"))[0]["content"]
    assert claims.endswith('{"claims": ["<text>", ...]}')
    # an enum: its words, one of them
    assert '"better": "first" or "second" or "tie"' in pair_prompt("overall").format_help()


def test_the_sketch_is_a_third_of_the_schema():
    import json

    schema = json.dumps(VERIFY_PROMPT.output_model.model_json_schema())
    sketch = VERIFY_PROMPT.format_help().split("\n", 1)[1]
    assert len(sketch) * 3 <= len(schema)  # characters, near enough to tokens
