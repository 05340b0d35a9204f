"""The pure checks of a generated question: quotes located in their sources (normalised
containment, the exact span returned), near-duplicate questions, type quotas."""

from __future__ import annotations

from ragmark.testset.checks import (
    DUPLICATE_JACCARD,
    QuoteProblem,
    check_quotes,
    clean_quote,
    jaccard,
    locate_quote,
    match_quotes,
    near_duplicate,
    question_words,
    quotas,
)
from ragmark.text import contains_normalised

SOURCE = ("Spring tides happen when the Sun and the Moon line up with the Earth.\n"
          "Their pulls then add   together and the range between high and low water grows.")


def test_a_quote_is_found_despite_case_and_white_space_and_the_exact_span_comes_back():
    got = locate_quote("their PULLS then add together and\tthe range", SOURCE)
    assert got == "Their pulls then add   together and the range"
    # the span is the source's own text, so `run` matches it like any ground-truth passage
    assert got in SOURCE and contains_normalised(got, SOURCE)


def test_a_quote_across_a_line_break_keeps_the_break_of_the_source():
    got = locate_quote("line up with the Earth. Their pulls", SOURCE)
    assert got == "line up with the Earth.\nTheir pulls"


def test_quotation_marks_and_ellipses_around_a_quote_are_ignored():
    assert clean_quote(' \u201c...the Sun and the Moon line up\u2026\u201d ') == (
        "the Sun and the Moon line up")
    assert locate_quote('"...the Sun and the Moon line up..."', SOURCE) == (
        "the Sun and the Moon line up")


def test_a_paraphrase_an_inner_ellipsis_or_a_short_quote_is_not_found():
    assert locate_quote("Spring tides occur when the Sun and Moon align", SOURCE) is None
    assert locate_quote("Spring tides happen ... with the Earth", SOURCE) is None
    assert locate_quote("Spring tides", SOURCE) is None  # 12 characters: under 20
    # the source inside a longer "quote" is not the quote inside the source
    assert locate_quote(SOURCE + " And more besides.", SOURCE) is None


def test_quotes_are_matched_to_their_own_sources_in_either_order():
    a = "Lake Baikal lies in southern Siberia and freezes over in winter."
    b = "Lake Tanganyika is shared by four countries of East Africa."
    quotes = ["shared by four countries of east africa", "lies in southern siberia and"]
    assert match_quotes(quotes, [a, b]) == ["lies in southern Siberia and",
                                             "shared by four countries of East Africa"]
    # both quotes from the first source: the second source has none
    assert match_quotes(["Lake Baikal lies in southern", "freezes over in winter."],
                        [a, b]) is None
    assert match_quotes(["lies in southern siberia and"], [a, b]) is None  # one short
    # more quotes than sources: each must occur somewhere, each source needs one
    three = ["freezes over in winter.", "shared by four countries of east africa",
             "Lake Baikal lies in southern"]
    assert match_quotes(three, [a, b]) == ["freezes over in winter.",
                                           "Lake Baikal lies in southern",
                                           "shared by four countries of East Africa"]
    assert match_quotes([*three, "a quote found in neither source"], [a, b]) is None
    # a quote both sources hold counts for the one that needs it
    both = "counts in either of the two sources"
    assert match_quotes([both, "Lake Baikal lies in southern"],
                        [f"{a} {both}.", f"{b} {both}."]) == [
        "Lake Baikal lies in southern", both]


def test_what_is_wrong_with_quotes_is_said_once_with_a_code_for_the_program():
    """check_quotes gives match_quotes' spans, or the first problem: its code (the
    rejection's reason) and the words the model is re-asked with."""
    a = "Lake Baikal lies in southern Siberia and freezes over in winter."
    b = "Lake Tanganyika is shared by four countries of East Africa."
    assert check_quotes(["shared by four countries of east africa",
                         "lies in southern siberia and"], [a, b]) == [
        "lies in southern Siberia and", "shared by four countries of East Africa"]
    assert check_quotes(["Lake Baikal lies in southern", "Africa."], [a, b]) == QuoteProblem(
        "quote_too_short", "quote 2 ('Africa.') is under 20 characters: copy a whole "
        "sentence")
    assert check_quotes(["Lake Baikal lies in northern Siberia",
                         "shared by four countries"], [a, b]) == QuoteProblem(
        "quote_not_in_source", "quote 1 ('Lake Baikal lies in northern Siberia') is not "
        "copied character for character from the documents: copy a sentence exactly as "
        "it is written, changing no word")
    # one document quoted twice: the bare one is shown by its first words (the 1.5B
    # model did not mend "document 2 has no quote" alone)
    assert check_quotes(["Lake Baikal lies in southern", "freezes over in winter."],
                        [a, b]) == QuoteProblem(
        "quote_not_in_source", "document 2, which begins 'Lake Tanganyika is shared by "
        "four countries of ...', has no quote (every quote is from document 1): "
        "give one quote copied from each document, in order")
    assert check_quotes(["freezes over in winter."], [a, b]).message.startswith(
        "document 2, which begins 'Lake Tanganyika")
    c = "Lake Malawi is deep."  # three documents, two quoted: no "every quote" clause
    assert check_quotes(["Lake Baikal lies in southern", "shared by four countries"],
                        [a, b, c]).message == (
        "document 3, which begins 'Lake Malawi is deep.', has no quote: give one quote "
        "copied from each document, in order")
    both = "counts in either of the two sources"  # one quote both hold: one short
    assert check_quotes([both], [f"{a} {both}.", f"{b} {both}."]) == QuoteProblem(
        "quote_not_in_source", "1 quote(s) for 2 documents: give one quote copied from "
        "each document, in order")


def test_near_duplicates_by_word_jaccard_at_the_documented_threshold():
    assert DUPLICATE_JACCARD == 0.75
    q = question_words("What does the record say about the harbour?")
    assert q == {"record", "say", "harbour"}
    same = question_words("WHAT does the record say about the harbour")
    longer = question_words("What does the old record say about the harbour?")
    other = question_words("What does the record say about the bridge?")
    assert jaccard(q, same) == 1.0
    assert jaccard(q, longer) == 0.75  # 3 shared of 4: a duplicate, just
    assert jaccard(q, other) == 0.5
    assert near_duplicate(longer, [other, q]) == 1
    assert near_duplicate(other, [q, longer]) is None
    # a question of stop words only is compared on all its words
    assert question_words("What is it?") == {"what", "is", "it"}


def test_quotas_share_the_size_round_robin():
    assert quotas(8, ["factual", "comparative", "reasoning", "summarization"]) == {
        "factual": 2, "comparative": 2, "reasoning": 2, "summarization": 2}
    assert quotas(5, ["factual", "multi_hop"]) == {"factual": 3, "multi_hop": 2}
    assert quotas(2, ["a", "b", "c"]) == {"a": 1, "b": 1, "c": 0}
