// The quiz's answer reader (src/geo/quiz.cpp): the boxed answer, the first number in it, the numbers and options
// it names, and the strict and containment grading against a reference, all on untrusted text (an agent's reply
// and a questions file's reference). Never throws; a number found is a substring of the text that strtod reads whole.
#include <cstdlib>
#include <string>

#include "advplan/geo/questions.hpp"
#include "advplan/geo/quiz.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan::geo;
  const std::string text = advplan::fuzz::text(data, size);
  const std::size_t split = text.find('\x1f');
  const std::string answer = text.substr(0, split);
  const std::string reference = split == std::string::npos ? "42" : text.substr(split + 1);
  if (const auto n = first_number_text(answer)) {
    if (n->empty() || n->data() < answer.data() || n->data() + n->size() > answer.data() + answer.size())
      std::abort();
    const std::string s(*n);
    char* end = nullptr;
    (void)std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) std::abort();
  }
  const auto b = boxed(answer);
  if (b && b->size() > answer.size()) std::abort();
  for (const char* format : {"numeric", "text", "boolean", "choice"}) {
    Question q;
    q.format = format;
    q.answer = reference;
    q.tolerance = 0.5;
    q.unsolvable = reference == "unsolvable";
    q.options = {reference, "blue sector", "red sector", "red sector north"};
    (void)grade_strict(q, b ? *b : answer);
    (void)grade_containment(q, b ? *b : answer);
    if (named_options(q.options, answer).size() > q.options.size()) std::abort();
  }
  (void)count_numbers(answer);
  (void)normalise(answer);
  return 0;
}
