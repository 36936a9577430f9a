"""
Benchmark 9b's gains: what a step (sleep, embeddings) adds over another is the mean of the
questions' differences, with a 95% interval from a paired bootstrap over the questions, so a
reader can tell a gain from the noise of a few hundred questions.

"""

import pytest

from bench.locomo import paired_gain


def test_no_difference_is_no_gain_with_no_width():
    scores = [0.0, 0.5, 1.0, 1.0, 0.25]
    assert paired_gain(scores, scores) == (0.0, 0.0, 0.0)


def test_the_same_gain_on_every_question_is_certain():
    base = [0.0, 0.25, 0.5, 0.0]
    gain, low, high = paired_gain([score + 0.25 for score in base], base)
    assert gain == pytest.approx(0.25)
    assert low == pytest.approx(0.25) and high == pytest.approx(0.25)


def test_gains_that_go_both_ways_are_not_told_from_noise():
    # four questions gained and three lost: the mean gain is one question in eight, and the
    # questions are resampled in pairs, so the interval spans the losses as well
    base = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    better = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    gain, low, high = paired_gain(better, base)
    assert gain == pytest.approx(1 / 8)
    assert low < 0 < gain < high


def test_a_few_questions_changed_among_many_are_a_narrow_interval():
    base = [0.0] * 400
    better = [1.0] * 40 + [0.0] * 360
    gain, low, high = paired_gain(better, base)
    assert gain == pytest.approx(0.1)
    # a 95% interval: about 1.96 standard errors, sqrt(0.1 * 0.9 / 400) = 0.015, either side
    assert low == pytest.approx(0.0725, abs=0.004) and high == pytest.approx(0.13, abs=0.004)


def test_the_figures_are_the_same_each_run():
    base = [0.0, 0.5, 1.0, 0.0, 0.5, 1.0]
    better = [0.5, 0.5, 1.0, 1.0, 0.0, 1.0]
    assert paired_gain(better, base) == paired_gain(better, base)


@pytest.mark.parametrize("better, base", [([1.0, 0.0], [1.0]), ([], [])])
def test_lists_that_are_not_the_same_questions_are_refused(better, base):
    with pytest.raises(ValueError, match="same questions"):
        paired_gain(better, base)
