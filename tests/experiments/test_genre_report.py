"""The report's genre section (experiments/genre_report.py): the dev study of a teacher for ``accurate``, a row per
teacher weight in the weights' order, each with its proportional F1 (precision / recall) on all ULA documents and
on the news, and the bundle and commit it came from."""

import json

from experiments.genre_report import density_lines, dev_run_lines, distillation_lines, genre_section
from experiments.genre_study import GENRES


def _study(weight: float, ula: tuple[float, float, float], news: tuple[float, float, float]) -> dict:
    def scores(f1: float, precision: float, recall: float) -> dict:
        prop = {"f1": f1, "precision": precision, "recall": recall}
        return {t: {"proportional": prop} for t in ("DSE", "ESE")}

    return {
        "weight": weight,
        "bundle": f"bundle {weight}",
        "git_commit": "0123456789abcdef",
        "results": [
            {"part": "all ULA", "o_bias": 0.0, "scores": scores(*ula)},
            {"part": "all ULA", "o_bias": 0.5, "scores": scores(0.1, 0.1, 0.1)},  # a biased decoder: not a row
            {"part": "news fold-0 test", "o_bias": 0.0, "scores": scores(*news)},
            *({"part": g, "o_bias": 0.0, "scores": scores(k / 10, 0.5, 0.5)} for k, g in enumerate(GENRES, start=1)),
        ],
    }


def _main_table(lines: list[str]) -> list[str]:
    return lines[: lines.index("The same networks by genre, proportional F1 DSE / ESE:")]


def test_a_row_per_teacher_weight_in_order_with_ula_and_news():
    lines = distillation_lines(
        [_study(0.9, (0.542, 0.471, 0.638), (0.735, 0.772, 0.7)), _study(0.0, (0.5, 0.4, 0.6), (0.7, 0.8, 0.6))]
    )
    rows = [line for line in _main_table(lines) if line.startswith("| 0.")]
    assert rows == [
        "| 0.0 | 50.0 (40.0 / 60.0) | 50.0 (40.0 / 60.0) | 70.0 (80.0 / 60.0) | 70.0 (80.0 / 60.0) "
        "| bundle 0.0, 0123456789 |",
        "| 0.9 | 54.2 (47.1 / 63.8) | 54.2 (47.1 / 63.8) | 73.5 (77.2 / 70.0) | 73.5 (77.2 / 70.0) "
        "| bundle 0.9, 0123456789 |",
    ]


def test_a_student_of_noisy_copies_follows_the_same_weight_without_them():
    copies = {**_study(0.9, (0.55, 0.5, 0.6), (0.7, 0.8, 0.6)), "copies": 1, "noise": 0.3}
    lines = distillation_lines([copies, _study(0.9, (0.542, 0.471, 0.638), (0.735, 0.772, 0.7))])
    rows = [line.split(" | ")[0] for line in _main_table(lines) if line.startswith("| 0.")]
    assert rows == ["| 0.9", "| 0.9, 1 (30.0% of words)"]


def test_a_student_names_its_copies_style_and_changes_after_its_weight():
    genres = {**_study(0.9, (0.5, 0.5, 0.5), (0.7, 0.7, 0.7)), "copies": 1, "noise": 0.1, "style": "genres"}
    dropout = {**_study(0.9, (0.5, 0.5, 0.5), (0.7, 0.7, 0.7)), "changes": {"model.recurrent.dropout": 0.3}}
    lines = distillation_lines([genres, dropout])
    rows = [line.split(" | ")[0] for line in lines if line.startswith("| 0.")]
    assert rows == ["| 0.9, dropout 0.3", "| 0.9, 1 in other genres' style (fillers before 10.0% of words)"] * 2
    by_genre = lines[lines.index("| teacher weight, copies | " + " | ".join(GENRES) + " |") :]
    assert (
        by_genre[2]
        == "| 0.9, dropout 0.3 | 10.0 / 10.0 | 20.0 / 20.0 | 30.0 / 30.0 | 40.0 / 40.0 | 50.0 / 50.0 | 60.0 / 60.0 |"
    )


def test_the_section_holds_the_study_only_where_its_results_are(tmp_path):
    assert not any("a teacher for" in line for line in genre_section(tmp_path, tmp_path))
    (tmp_path / "genre-distillation").mkdir()
    (tmp_path / "genre-distillation" / "w.json").write_text(json.dumps(_study(0.5, (0.5, 0.5, 0.5), (0.7, 0.7, 0.7))))
    lines = genre_section(tmp_path, tmp_path)
    assert "### Zero-shot: a teacher for `accurate` (dev study on the ULA documents)" in lines
    assert (
        "| 0.5 | 50.0 (50.0 / 50.0) | 50.0 (50.0 / 50.0) | 70.0 (70.0 / 70.0) | 70.0 (70.0 / 70.0) "
        "| bundle 0.5, 0123456789 |" in lines
    )


def _dev_run(adapted: list[tuple[float, float]], best: list[int]) -> dict:
    def scores(dse: float, ese: float) -> dict:
        return {"DSE": {"proportional": dse}, "ESE": {"proportional": ese}}

    def stat(values: list[float]) -> dict:
        mean = sum(values) / len(values)
        return {"mean": mean, "sd": (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5}

    runs = [
        {
            "zero_shot": scores(0.5, 0.4),
            "adapted": scores(*a),
            "news_fold0_test": scores(0.7, 0.6),
            "best_epoch": b,
            "wall_seconds": 100.0,
        }
        for a, b in zip(adapted, best, strict=True)
    ]
    curve = {
        "zero_shot": {"DSE": stat([0.5] * len(runs)), "ESE": stat([0.4] * len(runs))},
        "adapted": {t: stat([r["adapted"][t]["proportional"] for r in runs]) for t in ("DSE", "ESE")},
        "news_fold0_test": {"DSE": stat([0.7] * len(runs)), "ESE": stat([0.6] * len(runs))},
        "wall_seconds": stat([100.0] * len(runs)),
    }
    settings = {"learning_rate": 0.001, "replay": 3.0, "epochs": 4}
    return {"model": "accurate", "settings": settings, "runs": runs, "curve": [curve]}


def test_a_dev_setting_of_several_draws_gives_their_mean_and_spread_and_each_kept_epoch():
    lines = dev_run_lines([_dev_run([(0.52, 0.38)], [2]), _dev_run([(0.52, 0.38), (0.54, 0.42)], [2, 3])])
    assert lines[2:] == [
        "| accurate | adam 0.001 constant | all | 3 | 4 (2) | 1 | 50.0 → 52.0 | 40.0 → 38.0 | 70.0 | 60.0 | 100 |",
        "| accurate | adam 0.001 constant | all | 3 | 4 (2, 3) | 2 | 50.0 → 53.0 ± 1.0 | 40.0 → 40.0 ± 2.0 "
        "| 70.0 ± 0.0 | 60.0 ± 0.0 | 100 |",
    ]


def test_density_by_the_hundred_words_where_the_study_counted_them():
    rated = {"per_sentence": 0.5, "per_100_words": 2.5, "low_intensity": 0.25}
    lines = density_lines({"density": {"letters": {"DSE": rated, "ESE": {**rated, "per_sentence": 1.0}}}})
    header = "| part | DSE a sentence | DSE a 100 words | DSE low | ESE a sentence | ESE a 100 words | ESE low |"
    assert lines[2] == header
    assert lines[-1] == "| letters | 0.50 | 2.50 | 25.0% | 1.00 | 2.50 | 25.0% |"
    older = {"letters": {t: {"per_sentence": 0.5, "low_intensity": 0.25} for t in ("DSE", "ESE")}}
    assert density_lines({"density": older})[-1] == "| letters | 0.50 | 25.0% | 0.50 | 25.0% |"
