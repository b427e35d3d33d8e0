"use strict";
(function () {
  document.documentElement.classList.add("has-js");
  var input = document.getElementById("card-filter");
  if (!input) { return; }
  input.addEventListener("input", function () {
    var q = input.value.toLowerCase();
    document.querySelectorAll("article.card").forEach(function (card) {
      var hay = (card.getAttribute("data-filter") || "").toLowerCase();
      card.classList.toggle("filtered", q !== "" && hay.indexOf(q) < 0);
    });
  });
})();
