from slugkit import slugify


class TestSlugify:
    def test_words_are_joined(self):
        assert slugify("Hello World") == "hello-world"

    def test_accents_are_folded(self):
        assert slugify("Crème Brûlée: A How-To") == "creme-brulee-a-how-to"

    def test_runs_of_punctuation_become_one_separator(self):
        assert slugify("a -- b ,, c") == "a-b-c"

    def test_edges_are_stripped(self):
        assert slugify("  ...Hello!  ") == "hello"

    def test_custom_separator(self):
        assert slugify("Straße & Co.", separator="_") == "strasse_co"

    def test_case_can_be_kept(self):
        assert slugify("Hello World", lowercase=False) == "Hello-World"

    def test_nothing_left(self):
        assert slugify("!!!") == ""

    def test_digits_are_kept(self):
        assert slugify("Top 10 of 2024") == "top-10-of-2024"
