(function(){var b=document.getElementById('toggle');b.hidden=false;
b.addEventListener('click',function(){var h=document.body.classList.toggle('hide-roles');
b.textContent=h?b.dataset.show:b.dataset.hide;b.setAttribute('aria-pressed',h);});})();
